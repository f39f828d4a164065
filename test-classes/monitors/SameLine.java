/**
 * Two synchronized blocks on one source line: workers 0 and 2 block at the first monitorenter, workers 1 and 3
 * at the second, two bytecode indexes that the report shows as the same line. Main holds the lock until all
 * four are BLOCKED, so there are exactly four contended enters on SameLine$Lock from SameLine.critical (one
 * line) called by SameLine$Worker.run: one entry in the report, with count 4 (tests/monitors.rs).
 */
public class SameLine {
    static final class Lock {}

    static final Lock LOCK = new Lock();
    static int first, second;

    // One line on purpose (see above).
    static void critical(boolean odd) throws InterruptedException {
        if (odd) { synchronized (LOCK) { second++; Thread.sleep(10); } } else { synchronized (LOCK) { first++; Thread.sleep(10); } }
    }

    static final class Worker extends Thread {
        final boolean odd;

        Worker(int i) {
            super("worker-" + i);
            odd = i % 2 == 1;
        }

        @Override
        public void run() {
            try {
                critical(odd);
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        }
    }

    public static void main(String[] args) throws Exception {
        Worker[] workers = new Worker[4];
        synchronized (LOCK) {
            for (int i = 0; i < workers.length; i++) {
                workers[i] = new Worker(i);
                workers[i].start();
            }
            for (Worker w : workers) {
                while (w.getState() != Thread.State.BLOCKED) {
                    Thread.sleep(1);
                }
            }
        }
        for (Worker w : workers) {
            w.join();
        }
        System.out.println("done " + first + " " + second);
    }
}
