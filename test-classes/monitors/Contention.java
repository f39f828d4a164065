/**
 * Four threads contend for one lock in a known pattern: main holds the lock until all four workers are
 * BLOCKED on it, then lets go; each worker holds it for 20 ms. Exactly four contended enters on
 * Contention$Lock, each from Contention.critical called by Contention$Worker.run.
 */
public class Contention {
    static final class Lock {}

    static final Lock LOCK = new Lock();
    static int inside;

    static void critical() throws InterruptedException {
        synchronized (LOCK) {
            inside++;
            Thread.sleep(20);
        }
    }

    static final class Worker extends Thread {
        Worker(int i) {
            super("worker-" + i);
        }

        @Override
        public void run() {
            try {
                critical();
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
        // Uncontended locking, many times: must not show up anywhere.
        Object quiet = new Object();
        long sum = 0;
        for (int i = 0; i < 100_000; i++) {
            synchronized (quiet) {
                sum += i;
            }
        }
        System.out.println("done " + inside + " " + sum);
    }
}
