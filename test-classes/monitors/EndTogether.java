import java.util.concurrent.CyclicBarrier;

/**
 * Twenty rounds of 32 threads that allocate and then end at the same moment (a barrier), so that many
 * ThreadEnd events run at once. Each ending thread hands its allocation rows over to the agent under the
 * agent's own lock: the monitor profile must not show that lock as the program's contention.
 */
public class EndTogether {
    static volatile Object sink;

    public static void main(String[] args) throws Exception {
        for (int round = 0; round < 20; round++) {
            int n = 32;
            CyclicBarrier together = new CyclicBarrier(n);
            Thread[] threads = new Thread[n];
            for (int i = 0; i < n; i++) {
                threads[i] = new Thread(() -> {
                    for (int k = 0; k < 1000; k++) sink = new int[k % 7];
                    try {
                        together.await();
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                });
                threads[i].start();
            }
            for (Thread t : threads) t.join();
        }
        System.out.println("ended " + 20 * 32 + " threads");
    }
}
