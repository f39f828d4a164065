import java.lang.reflect.Method;
import java.util.concurrent.CountDownLatch;

/**
 * tests/calls.rs, "call rows cover every id before it runs": a worker thread starts, then a class with
 * thousands of probed methods (args[0], written by the test) loads, and then the worker and main call each of
 * its methods once through its static callAll(). The class's method ids lie past the length the threads' call
 * rows had at their start, so the agent must lengthen every thread's row when it rewrites the class; then no
 * call takes the entry probe's slow path. Prints what instr.Counts reads for callAll.
 */
public class RowGrowth {
    public static void main(String[] args) throws Exception {
        String wide = args[0];
        CountDownLatch loaded = new CountDownLatch(1);
        Throwable[] failed = new Throwable[1];
        Thread worker = new Thread(() -> {
            try {
                loaded.await();
                callAll(wide);
            } catch (Throwable t) {
                failed[0] = t;
            }
        }, "row-growth-worker");
        worker.start();
        Class.forName(wide, false, RowGrowth.class.getClassLoader());
        loaded.countDown();
        worker.join();
        if (failed[0] != null) throw new AssertionError(failed[0]);
        callAll(wide);
        Class<?> calls = Class.forName("java.lang.HeapProxyCalls");
        Method count = calls.getMethod("calls", String.class, String.class, String.class);
        System.out.println("counted " + count.invoke(null, wide, "callAll", "()V"));
    }

    private static void callAll(String wide) throws Exception {
        Class.forName(wide).getMethod("callAll").invoke(null);
    }
}
