package alloccost;

/**
 * The cost of one counted allocation: a loop making small objects of two classes at two sites, timed in rounds
 * after warm-up; prints the best round's nanoseconds per object. Run by alloc.sh with and without the agent.
 */
public final class AllocCost {
    static final class Point {
        final int x;
        Point(int x) { this.x = x; }
    }

    static final class Cell {
        long value;
    }

    static Object sink;

    public static void main(String[] args) {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 20_000_000;
        long best = Long.MAX_VALUE;
        int check = 0;
        for (int round = 0; round < 8; round++) {
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                Point p = new Point(i);
                Cell c = new Cell();
                c.value = p.x;
                check += (int) c.value;
                // Now and then one escapes, so that the JIT cannot remove the allocations.
                if ((i & 1023) == 0) sink = (i & 2048) == 0 ? p : c;
            }
            long t = System.nanoTime() - t0;
            if (round >= 3) best = Math.min(best, t);
        }
        System.out.printf("ns_per_object: %.2f%n", best / (2.0 * n));
        if (check == 42) System.out.println(sink);
    }
}
