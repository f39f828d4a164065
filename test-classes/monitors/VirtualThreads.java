// @requires-jdk 21
/** Five virtual threads, named vt-0 to vt-4, each started and joined: the thread profiler reports them. */
public class VirtualThreads {
    public static void main(String[] args) throws Exception {
        Thread[] threads = new Thread[5];
        for (int i = 0; i < threads.length; i++) {
            threads[i] = Thread.ofVirtual().name("vt-" + i).start(() -> {
                try {
                    Thread.sleep(10);
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            });
        }
        for (Thread t : threads) {
            t.join();
        }
        System.out.println("done");
    }
}
