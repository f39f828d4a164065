// Allocations that C2 (and C1, for an array's clone, from JDK 21) makes in code of its own, with neither the
// probes in the JDK's bytecode nor the VMObjectAlloc event of the JDK's natives: see agent/src/
// allocating_intrinsics.rs and rewriter/src/probes/vm_made.rs. Each loop runs often enough for C2 to
// compile it. The JDK allocates arrays and StringBuilders for itself too, so the program reads each class's
// count through HeapProxy (as instr.Counts does) before and after its loop, and prints the difference as
// `name: count`; the test compares the lines across execution modes.
public class HotIntrinsics {
    static final int N = 100_000;
    static Object sink;

    static final class Made {}

    static final class Twin implements Cloneable {
        Twin copy() throws CloneNotSupportedException { return (Twin) super.clone(); }
    }

    // javac still names java/lang/Object for super.clone() here: Base has no clone() of its own.
    static class Base {}
    static final class Derived extends Base implements Cloneable {
        Derived copy() throws CloneNotSupportedException { return (Derived) super.clone(); }
    }

    // super.clone() through a superclass that declares clone() itself: javac names Middle, whose clone() counts
    // the object; the call in Lower must not count it again.
    static class Middle implements Cloneable {
        @Override protected Object clone() throws CloneNotSupportedException { return super.clone(); }
    }
    static final class Lower extends Middle {
        Lower copy() throws CloneNotSupportedException { return (Lower) super.clone(); }
    }

    // Two classes as a superclass's other version leaves them (separate compilation). The test renames names in
    // their class files after javac (tests/agent.rs, compile_agent_programs):
    // - Renamed's call names NoClone, which has no clone(), instead of Object: it reaches Object.clone.
    static class NoClone {}
    static final class Renamed extends NoClone implements Cloneable {
        Renamed copy() throws CloneNotSupportedException { return (Renamed) super.clone(); }
    }
    // - Grown's superclass gains a clone() (clonf becomes clone), while Grown's call still names Object: the
    //   call runs Grown's superclass's clone(), which counts the object.
    static class GainsClone {
        protected Object clonf() throws CloneNotSupportedException { return super.clone(); }
    }
    static final class Grown extends GainsClone implements Cloneable {
        Grown copy() throws CloneNotSupportedException { return (Grown) super.clone(); }
    }

    // Classes a start of allocation counting may leave as they are: DirectCopy has no allocation site, and
    // Chain none at depth 0 (where a `new` of an object is not one). C2's code for their methods, compiled
    // before a start at run time, holds the intrinsics; the start throws it away.
    static final class DirectCopy {
        static Object copy(Object[] from) { return java.util.Arrays.copyOf(from, 2, Made[].class); }
    }
    static final class Chain {
        static String of(int i) { return new StringBuilder().append("y").append(i).toString(); }
    }

    static java.lang.reflect.Method slotOf, counts;

    interface Loop { void run(int i) throws Exception; }

    // With -Dlate[=RULES] (the agent loaded with start=off): every loop first runs its N rounds uncounted, compiled by
    // C2 with the intrinsics on, then the program starts allocation counting (what instr.Control.start
    // does) and measures, as after `instr ctl PID start alloc` in a JVM that has run for a while. It then
    // prints what the start changed in the compilers, and what is left of it after the stop.
    public static void main(String[] args) throws Exception {
        Class<?> h = Class.forName("java.lang.HeapProxy", false, null);
        slotOf = h.getMethod("classSlotOf", Class.class);
        counts = h.getMethod("instanceCounts");
        Made[] one = { new Made() };
        char[] notLatin1 = { '\u20ac', 'a' };
        Twin twin = new Twin();
        Derived derived = new Derived();
        Lower lower = new Lower();
        Renamed renamed = new Renamed();
        Grown grown = new Grown();
        Object[][] cases = {
            { "Array.newInstance", Made[].class, (Loop) i -> sink = java.lang.reflect.Array.newInstance(Made.class, 1) },
            { "array clone", Made[].class, (Loop) i -> sink = one.clone() },
            { "float[] clone", float[].class, (Loop) i -> sink = new float[] { i }.clone() },
            { "Arrays.copyOf", Made[].class, (Loop) i -> sink = java.util.Arrays.copyOf(one, 2) },
            { "Arrays.copyOfRange", Made[].class, (Loop) i -> sink = java.util.Arrays.copyOfRange(one, 0, 2) },
            { "object clone", Twin.class, (Loop) i -> sink = twin.copy() },
            { "subclass clone", Derived.class, (Loop) i -> sink = derived.copy() },
            { "clone through an override", Lower.class, (Loop) i -> sink = lower.copy() },
            { "clone naming a superclass", Renamed.class, (Loop) i -> sink = renamed.copy() },
            { "clone whose superclass gained one", Grown.class, (Loop) i -> sink = grown.copy() },
            { "String of chars", byte[].class, (Loop) i -> sink = new String(notLatin1) },
            { "StringBuilder", StringBuilder.class, (Loop) i -> sink = new StringBuilder().append("x").append(i).toString() },
            { "Arrays.copyOf called directly", Made[].class, (Loop) i -> sink = DirectCopy.copy(one) },
            { "StringBuilder in a class of no site", StringBuilder.class, (Loop) i -> sink = Chain.of(i) },
        };
        boolean late = System.getProperty("late") != null;
        java.lang.reflect.Method control = h.getMethod("control", String.class);
        if (late) {
            for (Object[] c : cases) for (int i = 0; i < N; i++) ((Loop) c[2]).run(i);
            String start = ("start alloc " + System.getProperty("late")).trim();
            System.err.println(start + ": " + control.invoke(null, start));
        }
        // Past JDK 17's reflection inflation (15 calls) and the loading of the classes the loops call, which
        // build names with StringBuilders, before any loop is measured.
        for (int i = 0; i < 40; i++) count(Made[].class);
        sink = Chain.of(0);
        sink = DirectCopy.copy(one);
        for (Object[] c : cases) measure((String) c[0], (Class<?>) c[1], (Loop) c[2]);
        if (late) {
            System.out.println("while on: " + compilers());
            System.err.println("stop alloc: " + control.invoke(null, "stop alloc"));
            System.out.println("after the stop: " + compilers());
        }
    }

    // The compiler directives on the VM's stack (the default one included), the intrinsics the top one turns
    // off in C1 and in C2 as Compiler.directives_print shows them, and OptimizeStringConcat.
    static String compilers() throws Exception {
        javax.management.MBeanServer server = java.lang.management.ManagementFactory.getPlatformMBeanServer();
        String directives = (String) server.invoke(
                new javax.management.ObjectName("com.sun.management:type=DiagnosticCommand"),
                "compilerDirectivesPrint", new Object[] { new String[0] }, new String[] { String[].class.getName() });
        String[] each = directives.split("Directive:", -1);
        java.util.List<String> lists = new java.util.ArrayList<>();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("DisableIntrinsic:(\\S*)").matcher(each[1]);
        while (m.find()) lists.add(m.group(1));
        String concat = java.lang.management.ManagementFactory
                .getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class)
                .getVMOption("OptimizeStringConcat").getValue();
        return (each.length - 1) + " directives, the top one's DisableIntrinsic " + lists
                + ", OptimizeStringConcat " + concat;
    }

    static void measure(String name, Class<?> c, Loop loop) throws Exception {
        long before = Math.max(0, count(c)); // -1: no slot yet, as nothing of the class was counted
        for (int i = 0; i < N; i++) loop.run(i);
        System.out.println(name + ": " + (count(c) - before));
    }

    static long count(Class<?> c) throws Exception {
        int slot = (int) slotOf.invoke(null, c);
        long[] c2 = (long[]) counts.invoke(null);
        return slot >= 0 && slot < c2.length ? c2[slot] : -1;
    }
}
