import java.lang.reflect.Method;

/**
 * Starts THREADS short platform threads (default 50,000), BATCH at a time, each calling ManyThreads.task once
 * and allocating one Payload; then prints the calls HeapProxyCalls counted (what instr.Counts reads) and how
 * many threads hold rows of call and allocation counts now. tests/calls.rs, "calls past the thread tables":
 * thread ids run far past the agent's 16,384 direct and 4,096 overflow call slots, and every call must still
 * be counted, whichever slot (or none) its thread had.
 */
public class ManyThreads {
    static final class Payload {}

    static volatile Object sink;

    static void task() {
        sink = new Payload();
    }

    public static void main(String[] args) throws Exception {
        int threads = args.length > 0 ? Integer.parseInt(args[0]) : 50_000;
        int batch = args.length > 1 ? Integer.parseInt(args[1]) : 4;
        Thread[] running = new Thread[batch];
        for (int started = 0; started < threads; ) {
            int n = Math.min(batch, threads - started);
            for (int i = 0; i < n; i++) {
                running[i] = new Thread(ManyThreads::task);
                running[i].start();
            }
            for (int i = 0; i < n; i++) running[i].join();
            started += n;
        }
        System.out.println("threads " + threads);
        Class<?> calls = Class.forName("java.lang.HeapProxyCalls");
        Method count = calls.getMethod("calls", String.class, String.class, String.class);
        System.out.println("counted " + count.invoke(null, "ManyThreads", "task", "()V"));
        System.out.println("call rows held " + calls.getMethod("rowsHeld").invoke(null));
        Class<?> proxy = Class.forName("java.lang.HeapProxy");
        System.out.println("allocation rows held " + proxy.getMethod("threadRowsHeld").invoke(null));
    }
}
