import java.util.concurrent.CountDownLatch;

/**
 * tests/agent.rs, "site pages cover every site before it runs": a worker thread starts, then a class with
 * thousands of allocation sites (args[0], written by the test) loads, and then the worker and main run each
 * of its sites once through its static allocateAll(). The class's site ids lie past the pages the threads had
 * at their start, so the agent must give every thread the new pages when it rewrites the class; then no site
 * probe takes its slow branch.
 */
public class SiteGrowth {
    public static void main(String[] args) throws Exception {
        String wide = args[0];
        CountDownLatch loaded = new CountDownLatch(1);
        Throwable[] failed = new Throwable[1];
        Thread worker = new Thread(() -> {
            try {
                loaded.await();
                allocateAll(wide);
            } catch (Throwable t) {
                failed[0] = t;
            }
        }, "site-growth-worker");
        worker.start();
        Class.forName(wide, false, SiteGrowth.class.getClassLoader());
        loaded.countDown();
        worker.join();
        if (failed[0] != null) throw new AssertionError(failed[0]);
        allocateAll(wide);
    }

    private static void allocateAll(String wide) throws Exception {
        Class.forName(wide).getMethod("allocateAll").invoke(null);
    }
}
