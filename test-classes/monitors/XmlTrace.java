import java.util.ArrayList;
import java.util.List;

/**
 * A small program for the XML trace: 3 worker threads that start and end, 300 allocations of
 * XmlTrace$Tracked (100 per worker), a contended monitor, a wait(10) that times out, a few GCs, and an
 * exit through System.exit from a thread other than main while another thread is still running.
 */
public class XmlTrace {
    static final class Tracked {
        final int n;

        Tracked(int n) {
            this.n = n;
        }
    }

    static final Object LOCK = new Object();
    static final List<Tracked> KEPT = new ArrayList<>();

    static void allocate(int count) {
        for (int i = 0; i < count; i++) {
            Tracked t = new Tracked(i);
            if (i % 10 == 0) {
                synchronized (KEPT) {
                    KEPT.add(t);
                }
            }
        }
    }

    public static void main(String[] args) throws Exception {
        Thread[] workers = new Thread[3];
        synchronized (LOCK) {
            for (int i = 0; i < workers.length; i++) {
                workers[i] = new Thread(() -> {
                    synchronized (LOCK) {
                        allocate(100);
                    }
                }, "xml-worker-" + i);
                workers[i].start();
            }
            for (Thread w : workers) {
                while (w.getState() != Thread.State.BLOCKED) {
                    Thread.sleep(1);
                }
            }
            LOCK.wait(10);
        }
        for (Thread w : workers) {
            w.join();
        }
        System.gc();
        System.gc();
        Thread spinner = new Thread(() -> {
            long x = 0;
            while (true) {
                x += System.nanoTime() & 1;
            }
        }, "spinner");
        spinner.setDaemon(true);
        spinner.start();
        Thread exiter = new Thread(() -> {
            System.out.println("exiting " + KEPT.size());
            System.exit(0);
        }, "exiter");
        exiter.start();
        exiter.join();
    }
}
