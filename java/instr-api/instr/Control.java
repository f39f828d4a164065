package instr;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * The control channel of the instr agent from inside the program: what {@code instr ctl PID COMMAND} does.
 *
 * <pre>
 * Control.start("alloc");          // the allocation probes go into the code
 * work();
 * Control.dump("/tmp/work.json");  // the report as it is now
 * Control.stop("alloc");           // and out again: the classes are their original bytes
 * </pre>
 *
 * The agent must be loaded, at start-up ({@code -agentpath:/path/libinstr.so=start=off}) or attached
 * ({@code instr attach PID}). Each method returns what the command printed, and throws
 * {@link IllegalArgumentException} with the agent's message when the command fails, or
 * {@link IllegalStateException} when there is no agent. See docs/ATTACH.md for the commands.
 */
public final class Control {
    private Control() {}

    private static volatile MethodHandle control;

    private static MethodHandle handle() {
        MethodHandle h = control;
        if (h != null) return h;
        try {
            Class<?> proxy = Class.forName("java.lang.HeapProxy", false, null);
            h = MethodHandles.publicLookup().findStatic(proxy, "control",
                    MethodType.methodType(String.class, String.class));
        } catch (ReflectiveOperationException | LinkageError e) {
            throw new IllegalStateException("instr agent not loaded: attach it with `instr attach PID` "
                    + "or start the JVM with -agentpath:/path/to/libinstr.so=start=off");
        }
        return control = h;
    }

    /** Runs one command line ({@code "start alloc"}, {@code "dump txt /tmp/p.txt"}) and returns its output. */
    public static String command(String line) {
        String answer;
        try {
            answer = (String) handle().invokeExact(line);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
        if (answer == null) throw new IllegalStateException("instr: the agent gave no answer (see stderr)");
        if (answer.startsWith("error: ")) throw new IllegalArgumentException("instr: " + answer.substring(7).trim());
        return answer.startsWith("ok\n") ? answer.substring(3) : answer;
    }

    public static String status() { return command("status"); }

    /**
     * Starts a probe: "alloc" or "methods" (added to the code by retransforming the classes it selects),
     * "live" (live objects from now, those already alive under "(before profiling)"), "monitors"
     * (contention and waits) or "cpu" (the CPU sampler; "cpu 1ms" names the interval).
     */
    public static String start(String probe) { return command("start " + probe); }

    /** Stops it: for alloc and methods every retransformed class is its original bytes again. */
    public static String stop(String probe) { return command("stop " + probe); }

    /** Writes the report as it is now to {@code file} (absolute), in the format its extension names. */
    public static String dump(String file) { return command("dump " + file); }

    public static String dump(String format, String file) { return command("dump " + format + " " + file); }

    public static String reset() { return command("reset"); }

    public static String threads() { return command("threads"); }

    public static String deadlocks() { return command("deadlocks"); }
}
