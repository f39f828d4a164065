/**
 * One wait(50) that times out (on a Waits$TimedLock, in Waits.timedWait) and one wait() that is notified
 * (on a Waits$NotifyLock, in Waits.notifiedWait, by main once the waiter is WAITING).
 */
public class Waits {
    static final class TimedLock {}

    static final class NotifyLock {}

    static final TimedLock TIMED = new TimedLock();
    static final NotifyLock NOTIFY = new NotifyLock();
    static boolean go;

    static long timedWait() throws InterruptedException {
        long t0 = System.nanoTime();
        synchronized (TIMED) {
            TIMED.wait(50);
        }
        return System.nanoTime() - t0;
    }

    static void notifiedWait() throws InterruptedException {
        synchronized (NOTIFY) {
            while (!go) {
                NOTIFY.wait();
            }
        }
    }

    public static void main(String[] args) throws Exception {
        long waited = timedWait();
        Thread waiter = new Thread(() -> {
            try {
                notifiedWait();
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
        }, "waiter");
        waiter.start();
        while (waiter.getState() != Thread.State.WAITING) {
            Thread.sleep(1);
        }
        synchronized (NOTIFY) {
            go = true;
            NOTIFY.notifyAll();
        }
        waiter.join();
        System.out.println("done " + (waited >= 50_000_000L));
    }
}
