// Allocations that C2 makes by intrinsics of its own unless the agent turns them off (allocating_intrinsics.rs):
// Array.newInstance and a StringBuilder chain. Each loop runs often enough for C2 to compile it. The
// StringBuilders the JDK makes for itself are counted too, so the program reads their count before and after
// its loop through HeapProxy (as instr.Counts does), and exits with status 3 unless the difference is N; the
// JSON report has the arrays' count.
public class HotIntrinsics {
    static final int N = 100_000;
    static Object sink;

    static final class Made {}

    public static void main(String[] args) throws Exception {
        for (int i = 0; i < N; i++) sink = java.lang.reflect.Array.newInstance(Made.class, 1); // N Made[]

        Class<?> h = Class.forName("java.lang.HeapProxy", false, null);
        java.lang.reflect.Method slotOf = h.getMethod("classSlotOf", Class.class);
        java.lang.reflect.Method counts = h.getMethod("instanceCounts");
        long before = builders(slotOf, counts);
        for (int i = 0; i < N; i++) sink = new StringBuilder().append("x").append(i).toString();
        long built = builders(slotOf, counts) - before;
        if (built != N) {
            System.err.println("StringBuilders counted in the loop: " + built + ", not " + N);
            System.exit(3);
        }
    }

    static long builders(java.lang.reflect.Method slotOf, java.lang.reflect.Method counts) throws Exception {
        int slot = (int) slotOf.invoke(null, StringBuilder.class);
        long[] c = (long[]) counts.invoke(null);
        return slot >= 0 && slot < c.length ? c[slot] : -1;
    }
}
