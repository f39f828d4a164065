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

    static java.lang.reflect.Method slotOf, counts;

    interface Loop { void run(int i) throws Exception; }

    public static void main(String[] args) throws Exception {
        Class<?> h = Class.forName("java.lang.HeapProxy", false, null);
        slotOf = h.getMethod("classSlotOf", Class.class);
        counts = h.getMethod("instanceCounts");
        Made[] one = { new Made() };
        // Past JDK 17's reflection inflation (15 calls), which builds names with StringBuilders, before any
        // loop is measured.
        for (int i = 0; i < 40; i++) count(Made[].class);
        char[] notLatin1 = { '\u20ac', 'a' };
        measure("Array.newInstance", Made[].class, i -> sink = java.lang.reflect.Array.newInstance(Made.class, 1));
        measure("array clone", Made[].class, i -> sink = one.clone());
        measure("float[] clone", float[].class, i -> sink = new float[] { i }.clone());
        measure("Arrays.copyOf", Made[].class, i -> sink = java.util.Arrays.copyOf(one, 2));
        measure("Arrays.copyOfRange", Made[].class, i -> sink = java.util.Arrays.copyOfRange(one, 0, 2));
        Twin twin = new Twin();
        measure("object clone", Twin.class, i -> sink = twin.copy());
        Derived derived = new Derived();
        measure("subclass clone", Derived.class, i -> sink = derived.copy());
        Lower lower = new Lower();
        measure("clone through an override", Lower.class, i -> sink = lower.copy());
        Renamed renamed = new Renamed();
        measure("clone naming a superclass", Renamed.class, i -> sink = renamed.copy());
        Grown grown = new Grown();
        measure("clone whose superclass gained one", Grown.class, i -> sink = grown.copy());
        measure("String of chars", byte[].class, i -> sink = new String(notLatin1));
        measure("StringBuilder", StringBuilder.class, i -> sink = new StringBuilder().append("x").append(i).toString());
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
