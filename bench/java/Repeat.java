import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * Runs a program's work several times in one JVM and prints how long each time took, so that a benchmark
 * can compare the steady state of a JVM in which the agent's probes were started and stopped with one in
 * which they never were (bench/steady-bench.sh, issue 18):
 *
 * <pre>
 * java [-agentpath:libinstr.so=start=off] -cp CP:. Repeat N SWITCH [--clean DIR] CLASS[#METHOD] ARGS...
 * </pre>
 *
 * CLASS.METHOD(String[]) (default: main) is called N times with ARGS. SWITCH is "none", or PROBES@K: the
 * probes (e.g. "alloc" or "alloc,live") start after the Kth time and stop after the next, through the
 * agent's control entry (what instr.Control and `instr ctl PID` use). --clean deletes DIR before each time (an index the
 * program would otherwise open again). The program's output is kept the first time only, so that a
 * script checking it sees one run's. Each time is printed to stderr as "repeat: TIME WALL_MS PROCESS_CPU_MS
 * THREAD_CPU_MS up=UPTIME_MS [(then start)|(then stop)]": the process's CPU counts every thread (the JIT's and
 * the GC's too), the thread's only the work's own code, and neither counts time the machine gave to others;
 * the JVM's uptime at the end of the time places it among the JVM's own logs (-Xlog:...:uptime).
 * -Drepeat.deoptAt=K throws every compiled method away after the Kth time (and unloads it with two full
 * GCs), through whitebox/jdk/test/whitebox/WhiteBox.java, so that the JIT compiles again from the profiles
 * every method has by then: whether code compiled late is faster than what the JIT made first.
 */
public final class Repeat {
    public static void main(String[] a) throws Throwable {
        int n = Integer.parseInt(a[0]);
        String[] probes = a[1].equals("none") ? new String[0] : a[1].split("@")[0].split(",");
        int switchAt = a[1].contains("@") ? Integer.parseInt(a[1].split("@")[1]) : 1;
        int at = 2;
        Path clean = null;
        if (a[at].equals("--clean")) {
            clean = Paths.get(a[at + 1]);
            at += 2;
        }
        String[] target = a[at].split("#", 2);
        String[] args = Arrays.copyOfRange(a, at + 1, a.length);
        Method work = Class.forName(target[0]).getMethod(target.length > 1 ? target[1] : "main", String[].class);
        PrintStream out = System.out;
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        int deoptAt = Integer.getInteger("repeat.deoptAt", 0);
        com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        for (int i = 1; i <= n; i++) {
            if (clean != null) delete(clean);
            long cpu0 = os.getProcessCpuTime(), thread0 = threads.getCurrentThreadCpuTime();
            long t0 = System.nanoTime();
            work.invoke(null, (Object) args.clone());
            long ms = (System.nanoTime() - t0) / 1_000_000;
            long cpuMs = (os.getProcessCpuTime() - cpu0) / 1_000_000;
            long threadMs = (threads.getCurrentThreadCpuTime() - thread0) / 1_000_000;
            String when = "";
            if (probes.length > 0 && i == switchAt) {
                for (String p : probes) control("start " + p);
                when = " (then start)";
            } else if (probes.length > 0 && i == switchAt + 1) {
                for (String p : probes) control("stop " + p);
                when = " (then stop)";
            }
            if (i == deoptAt) {
                when += deoptimizeAll();
            }
            System.err.println("repeat: " + i + " " + ms + " " + cpuMs + " " + threadMs + " up="
                    + ManagementFactory.getRuntimeMXBean().getUptime() + when);
            if (i == 1) System.setOut(new PrintStream(OutputStream.nullOutputStream()));
        }
        System.setOut(out);
    }

    private static void control(String command) throws Throwable {
        Class<?> proxy = Class.forName("java.lang.HeapProxy", false, null);
        MethodHandle h = MethodHandles.publicLookup().findStatic(proxy, "control",
                MethodType.methodType(String.class, String.class));
        String answer = (String) h.invokeExact(command);
        if (answer == null || answer.startsWith("error: ")) {
            throw new IllegalStateException("instr " + command + ": " + answer);
        }
        System.err.println("repeat: " + command + ": " + answer.replace('\n', ' ').trim());
    }

    /** Every compiled method thrown away and its code unloaded, through HotSpot's testing interface. */
    private static String deoptimizeAll() throws Throwable {
        Class<?> wb = Class.forName("jdk.test.whitebox.WhiteBox", true, null);
        Object box = wb.getField("INSTANCE").get(null);
        long t0 = System.nanoTime();
        wb.getMethod("deoptimizeAll").invoke(box);
        wb.getMethod("fullGC").invoke(box);
        wb.getMethod("fullGC").invoke(box);
        return " (then deoptimized all in " + (System.nanoTime() - t0) / 1_000_000 + " ms)";
    }

    private static void delete(Path dir) throws Exception {
        if (!Files.exists(dir)) return;
        try (Stream<Path> all = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) all.sorted(Comparator.reverseOrder())::iterator) Files.delete(p);
        }
    }
}
