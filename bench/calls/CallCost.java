package callcost;

/**
 * The cost of a counted call, timed in three shapes that real code has: deep recursion (fib, nothing
 * inlined across the recursive calls), small methods that C2 inlines (vector arithmetic in a loop, like a
 * ray tracer's inner loop), and virtual calls through an interface. Each shape runs ROUNDS rounds; the best
 * round is printed in ns per call of an instrumented method, with the exact number of such calls, so that
 * calls.sh can compare the same program without the agent and with calls=counts or calls=times.
 */
public class CallCost {
    static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

    static final class Vec {
        final double x, y, z;
        Vec(double x, double y, double z) { this.x = x; this.y = y; this.z = z; }
        double dot(Vec o) { return x * o.x + y * o.y + z * o.z; }
        Vec scale(double k) { return new Vec(x * k, y * k, z * k); }
        Vec add(Vec o) { return new Vec(x + o.x, y + o.y, z + o.z); }
    }

    interface Shape { double area(); }
    static final class Square implements Shape { final double s; Square(double s) { this.s = s; } public double area() { return s * s; } }
    static final class Circle implements Shape { final double r; Circle(double r) { this.r = r; } public double area() { return 3.14159 * r * r; } }

    static double sink;

    /** Calls of instrumented methods per run of each shape. */
    static final long FIB_CALLS = 2_692_537;           // fib(30)
    static final int VEC_N = 1_000_000;                  // per iteration: dot, scale, add, 2 constructors
    static final int SHAPE_N = 3_000_000;

    static void fibRound() { sink += fib(30); }

    static void vecRound() {
        Vec a = new Vec(1, 2, 3), acc = new Vec(0, 0, 0);
        double s = 0;
        for (int i = 0; i < VEC_N; i++) {
            s += a.dot(acc);
            acc = acc.add(a.scale(1e-9));
        }
        sink += s + acc.x;
    }

    static void shapeRound(Shape[] shapes) {
        double s = 0;
        for (int i = 0; i < SHAPE_N; i++) s += shapes[i & 3].area();
        sink += s;
    }

    interface Round { void run(); }

    static double best(int rounds, long calls, Round r) {
        double best = Double.MAX_VALUE;
        for (int k = 0; k < rounds; k++) {
            long t0 = System.nanoTime();
            r.run();
            best = Math.min(best, (System.nanoTime() - t0) / (double) calls);
        }
        return best;
    }

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 30;
        Shape[] shapes = {new Square(1), new Circle(2), new Square(3), new Circle(4)};
        double fib = best(rounds, FIB_CALLS, CallCost::fibRound);
        double vec = best(rounds, 5L * VEC_N, CallCost::vecRound);
        double shape = best(rounds, SHAPE_N, () -> shapeRound(shapes));
        System.out.printf("fib_ns_per_call: %.3f%nvec_ns_per_call: %.3f%nshape_ns_per_call: %.3f%n", fib, vec, shape);
    }
}
