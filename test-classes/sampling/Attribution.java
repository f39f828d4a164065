import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * Two threads burn CPU in known proportions: "hot-thread" runs hot() until it has used 3 units of its own
 * CPU time, "warm-thread" runs warm() for 1 unit, so hot() is 75% and warm() 25% of the work whatever the
 * JIT does with either. The CPU-time check is in the callers, between calls, so each method's own samples
 * are its arithmetic. Meanwhile "sleeper" sleeps and "blocked" waits for a lock main holds: both should
 * get wall-clock samples, and CPU samples for no more than the little CPU time they used. Prints the
 * exact number of calls of hot() and warm(), and the idle threads' CPU time.
 *
 * java Attribution [UNIT_MS]   (default 400)
 */
public class Attribution {
    static final ThreadMXBean BEAN = ManagementFactory.getThreadMXBean();
    static final Object LOCK = new Object();
    static volatile long sink;
    static volatile boolean done;
    static long hotCalls, warmCalls;
    static volatile long sleeperCpu, blockedCpu;

    static long cpu() {
        return BEAN.getCurrentThreadCpuTime();
    }

    static void hot() {
        long x = sink;
        for (int i = 0; i < 20_000; i++) {
            x += (x >>> 7) ^ (i * 0x9E3779B97F4A7C15L);
        }
        sink = x;
    }

    static void warm() {
        long x = sink;
        for (int i = 0; i < 20_000; i++) {
            x += (x >>> 7) ^ (i * 0x9E3779B97F4A7C15L);
        }
        sink = x;
    }

    public static void main(String[] args) throws Exception {
        long unit = (args.length > 0 ? Long.parseLong(args[0]) : 400) * 1_000_000L;
        Thread h = new Thread(() -> {
            long start = cpu();
            while (cpu() - start < 3 * unit) {
                hot();
                hotCalls++;
            }
        }, "hot-thread");
        Thread w = new Thread(() -> {
            long start = cpu();
            while (cpu() - start < unit) {
                warm();
                warmCalls++;
            }
        }, "warm-thread");
        Thread sleeper = new Thread(() -> {
            try {
                Thread.sleep(600_000);
            } catch (InterruptedException e) {
                // main wakes it at the end
            }
            sleeperCpu = cpu();
        }, "sleeper");
        Thread blocked = new Thread(() -> {
            synchronized (LOCK) {
                sink++;
            }
            blockedCpu = cpu();
        }, "blocked");
        sleeper.start();
        synchronized (LOCK) {
            blocked.start();
            h.start();
            w.start();
            h.join();
            w.join();
        }
        done = true;
        sleeper.interrupt();
        blocked.join();
        sleeper.join();
        // The CPU time the two idle threads used in all (starting, waking, spinning on the lock before
        // parking), in microseconds: their CPU samples can only account for that much.
        System.out.println("hot=" + hotCalls + " warm=" + warmCalls + " sleeperCpuUs=" + sleeperCpu / 1000
                + " blockedCpuUs=" + blockedCpu / 1000);
    }
}
