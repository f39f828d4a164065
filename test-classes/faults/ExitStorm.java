// The fault suite's (tests/faults.rs) exit race: eight threads call System.exit(3) at the same moment while
// they, and four daemon threads that never stop, allocate, call a probed method and contend on two
// monitors (each event also goes to the XML trace when it is on). Prints one line before the exits and
// nothing after, so its stdout and exit status (3) are the same with and without the agent.
import java.util.concurrent.CountDownLatch;

public class ExitStorm {
    static final class Item {
        final long value;

        Item(long value) {
            this.value = value;
        }
    }

    static final int EXITERS = 8;
    static final Object[] LOCKS = {new Object(), new Object()};
    static final CountDownLatch WARMED_UP = new CountDownLatch(EXITERS);
    static volatile boolean exitNow;
    static volatile Object sink;

    // The probed method: an object, an array and a contended monitor per call.
    static long work(long i) {
        Item item = new Item(i);
        long[] spare = new long[(int) (i & 7)];
        synchronized (LOCKS[(int) (i & 1)]) {
            sink = item;
            for (int k = 0; k < 50; k++) {
                spare = spare.length > 0 ? spare : new long[1];
            }
        }
        return item.value + spare.length;
    }

    static void exiter() {
        long n = 0;
        while (true) {
            work(n++);
            if (n == 2_000) {
                WARMED_UP.countDown();
            }
            if (exitNow) {
                System.exit(3);
            }
        }
    }

    static void churner() {
        long n = 0;
        while (true) {
            work(n++);
        }
    }

    public static void main(String[] args) throws Exception {
        for (int i = 0; i < 4; i++) {
            Thread t = new Thread(ExitStorm::churner, "churner-" + i);
            t.setDaemon(true);
            t.start();
        }
        for (int i = 0; i < EXITERS; i++) {
            new Thread(ExitStorm::exiter, "exiter-" + i).start();
        }
        WARMED_UP.await();
        System.out.println(EXITERS + " threads warmed up; all of them exit now");
        System.out.flush();
        exitNow = true;
        Thread.sleep(Long.MAX_VALUE);
    }
}
