import java.lang.management.ManagementFactory;

/**
 * Objects and arrays that never leave their method, allocated in a loop C2 compiles: without the agent C2
 * scalar-replaces them and the loop allocates nothing on the heap. The probes count each one and must leave
 * that so. First, threads that each allocate a little, so that the probes' slow branches (a thread's first
 * object of a class) are taken while the probes are profiled, as in any real program.
 *
 * Prints "heap bytes per iteration: N" for the last of several rounds (0 when scalar-replaced; 16 or more
 * when the objects escape).
 */
public class ScalarReplaced {
    static final class Point {
        final long x, y;
        Point(long x, long y) { this.x = x; this.y = y; }
        long sum() { return x + y; }
    }

    static long work(int n, long r) {
        long s = 0;
        for (int i = 0; i < n; i++) {
            Point p = new Point(i, r);
            int[] pair = new int[2];
            pair[0] = i;
            pair[1] = (int) r;
            s += p.sum() + pair[0] + pair[1];
        }
        return s;
    }

    public static void main(String[] args) throws Exception {
        for (int t = 0; t < 200; t++) {
            Thread th = new Thread(() -> {
                for (int i = 0; i < 2000; i++) sink = new StringBuilder().append(new int[i & 3].length);
            });
            th.start();
            th.join();
            work(2000, t);
        }
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        int n = 5_000_000;
        long perIteration = -1, s = 0;
        for (int round = 0; round < 8; round++) {
            long before = mx.getCurrentThreadAllocatedBytes();
            s += work(n, round);
            perIteration = (mx.getCurrentThreadAllocatedBytes() - before) / n;
        }
        System.out.println("checksum: " + s);
        System.out.println("heap bytes per iteration: " + perIteration);
    }

    static Object sink;
}
