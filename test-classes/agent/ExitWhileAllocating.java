// The VM exits (System.exit from main) while eight daemon threads are still allocating as fast as they can:
// the agent must write its reports without deadlocking or crashing (tests/agent.rs).
public class ExitWhileAllocating {
    static volatile Object sink;

    public static void main(String[] args) throws Exception {
        for (int t = 0; t < 8; t++) {
            Thread th = new Thread(() -> {
                while (true) {
                    sink = new int[16];
                    sink = new StringBuilder("x");
                }
            });
            th.setDaemon(true);
            th.start();
        }
        Thread.sleep(300);
        System.out.println("exiting");
        System.exit(0);
    }
}
