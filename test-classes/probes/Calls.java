// Exact method entry/exit counts: the test rewrites this class with every probe and checks, per method id,
// the numbers printed by HeapProxy.methodReport() against the id map that rewrite-class wrote.
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntUnaryOperator;

public class Calls {
    static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

    // An exception thrown three frames below the frame that catches it.
    static void level3(int i) { if (i >= 0) throw new IllegalStateException("deep " + i); }
    static void level2(int i) { level3(i); }
    static void level1(int i) { level2(i); }
    static int catcher(int i) {
        try { level1(i); return 0; } catch (IllegalStateException e) { return 1; }
    }

    // Constructors that throw before and after super().
    static class Base { Base(int v) { if (v == 13) throw new IllegalArgumentException("base"); } }
    static class BeforeSuper extends Base {
        BeforeSuper(int v) { super(check(v)); }                  // check() throws before super() runs
        static int check(int v) { if (v < 0) throw new IllegalArgumentException("neg"); return v; }
    }
    static class AfterSuper extends Base {
        AfterSuper(int v) { super(v); if (v > 100) throw new IllegalArgumentException("big"); }
    }
    static class Delegating extends Base {
        Delegating() { this(1); }
        Delegating(int v) { super(v > 0 ? v : -v); }
    }

    // synchronized methods and blocks, one ending by an exception.
    static final Object lock = new Object();
    static int counter;
    static synchronized void syncMethod() { counter++; }
    static synchronized void syncThrows() { counter++; throw new UnsupportedOperationException(); }
    static void syncBlock(boolean fail) {
        synchronized (lock) {
            counter++;
            if (fail) throw new IllegalStateException("in block");
        }
    }

    interface Shape {
        double area();
        default String describe() { return kind() + ":" + (int) area(); }
        static Shape square(double s) { return () -> s * s; }
        private String kind() { return "shape"; }
    }

    enum Op {
        ADD { int apply(int a, int b) { return a + b; } },
        MUL { int apply(int a, int b) { return a * b; } };
        abstract int apply(int a, int b);
    }

    class Inner { int twice(int v) { return 2 * v; } }

    // A value class whose constructor calls nothing but Object's: a leaf.
    static final class Point { final int x, y; Point(int x, int y) { this.x = x; this.y = y; } }

    public static void main(String[] args) {
        HeapProxy.reset();
        int f = fib(20);

        int caught = 0;
        for (int i = 0; i < 7; i++) caught += catcher(i);

        int ctorFailures = 0;
        for (int v : new int[]{ 1, -1, 13, 101, 5 }) {
            try { new BeforeSuper(v); } catch (IllegalArgumentException e) { ctorFailures++; }
            try { new AfterSuper(v); } catch (IllegalArgumentException e) { ctorFailures++; }
        }
        new Delegating();

        for (int i = 0; i < 5; i++) syncMethod();
        for (int i = 0; i < 4; i++) {
            try { syncThrows(); } catch (UnsupportedOperationException e) { caught++; }
        }
        for (int i = 0; i < 6; i++) {
            try { syncBlock(i % 2 == 0); } catch (IllegalStateException e) { caught++; }
        }

        IntUnaryOperator square = x -> x * x;
        int sum = 0;
        for (int i = 0; i < 10; i++) sum += square.applyAsInt(i);
        List<Shape> shapes = new ArrayList<>();
        for (int i = 1; i <= 3; i++) shapes.add(Shape.square(i));
        StringBuilder d = new StringBuilder();
        for (Shape s : shapes) d.append(s.describe()).append(' ');
        int ops = Op.ADD.apply(2, 3) + Op.MUL.apply(2, 3);
        Inner inner = new Calls().new Inner();
        int t = inner.twice(21) + new Point(0, 0).x;

        String report = HeapProxy.methodReport();
        System.out.println("result fib=" + f + " caught=" + caught + " ctorFailures=" + ctorFailures
                + " counter=" + counter + " sum=" + sum + " shapes=" + d.toString().trim() + " ops=" + ops + " twice=" + t);
        System.out.print(report);
    }
}
