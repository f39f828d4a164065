// Exact object and array counts: the test rewrites this class and java.lang.Object with the allocation probes
// and runs it against the counting test HeapProxy. Prints "count <class> <n>" for each class it allocates and
// "site <id> <n>" for each allocation site (a `new` or array instruction) that ran (an array's clone and
// Array.newInstance count by class only), and "built <id> <n>" for
// each `new` site whose objects were handed over once constructed (live tracking).
import java.util.function.Supplier;

public class Allocations {
    static class Foo { int x; }
    static class Bar extends Foo { Bar() { super(); } Bar(int v) { this(); x = v; } }
    record Point(int x, int y) {}
    static class Twin implements Cloneable {
        Twin copy() {
            try {
                return (Twin) super.clone();                     // invokespecial java/lang/Object.clone
            } catch (CloneNotSupportedException e) {
                throw new AssertionError(e);
            }
        }
    }
    static class Triplet extends Twin {}
    // super.clone() where the superclass is not Object: HeapProxy.superCloned decides whether it reached
    // Object.clone (Quad, through Plain) or an override that counted the object itself (Low, through Mid).
    static class Plain {}
    static class Quad extends Plain implements Cloneable {
        Quad copy() {
            try {
                return (Quad) super.clone();                     // invokespecial java/lang/Object.clone
            } catch (CloneNotSupportedException e) {
                throw new AssertionError(e);
            }
        }
    }
    static class Mid implements Cloneable {
        @Override protected Object clone() throws CloneNotSupportedException { return super.clone(); }
    }
    static class Low extends Mid {
        Low copy() {
            try {
                return (Low) super.clone();                      // invokespecial Allocations$Mid.clone
            } catch (CloneNotSupportedException e) {
                throw new AssertionError(e);
            }
        }
    }

    static Object sink;

    public static void main(String[] args) {
        HeapProxy.reset();
        for (int i = 0; i < 1000; i++) sink = new Foo();
        for (int i = 0; i < 250; i++) sink = new Bar(i);          // this() then super(): one object each
        Supplier<Point> s = () -> new Point(1, 2);
        for (int i = 0; i < 40; i++) sink = s.get();

        for (int i = 0; i < 3; i++) {
            sink = new boolean[1]; sink = new byte[2]; sink = new char[3]; sink = new short[4];
            sink = new int[5]; sink = new long[6]; sink = new float[7]; sink = new double[8];
        }
        sink = new String[10];
        sink = new Foo[]{ null, null };                          // initializer: anewarray
        sink = new int[3][4];                                    // 1 int[][] + 3 int[]
        sink = new int[2][];                                     // 1 int[][] only
        sink = new Foo[2][3][];                                  // 1 Foo[][][] + 2 Foo[][]
        sink = new long[2][2][2];                                // 1 + 2 + 4
        char[] chars = new char[3];                              // a site, like the loop's
        for (int i = 0; i < 20; i++) sink = chars.clone();       // 20 char[], counted after the call
        for (int i = 0; i < 7; i++) {
            sink = java.lang.reflect.Array.newInstance(String.class, 2); // 7 String[], counted after the call
        }
        Twin twin = new Twin();
        for (int i = 0; i < 5; i++) sink = twin.copy();          // 5 Twin, counted after super.clone()
        Twin triplet = new Triplet();
        for (int i = 0; i < 3; i++) sink = triplet.copy();       // 3 Triplet, through Twin's super.clone()
        Quad quad = new Quad();
        for (int i = 0; i < 2; i++) sink = quad.copy();          // 2 Quad, counted after the call
        Low low = new Low();
        for (int i = 0; i < 2; i++) sink = low.copy();           // 2 Low, counted in Mid.clone only
        try {
            sink = new int[-1];                                  // throws: no array, no count
        } catch (NegativeArraySizeException e) {
            // expected
        }

        Class<?>[] report = {
            Foo.class, Bar.class, Point.class, Twin.class, Triplet.class, Quad.class, Low.class,
            boolean[].class, byte[].class, char[].class, short[].class,
            int[].class, long[].class, float[].class, double[].class,
            String[].class, Foo[].class, int[][].class, Foo[][][].class, Foo[][].class,
            long[][][].class, long[][].class,
        };
        long[] counts = new long[report.length];
        for (int i = 0; i < report.length; i++) counts[i] = HeapProxy.count(report[i]);
        long[] sites = new long[1 << 16];
        long[] built = new long[1 << 16];
        for (int id = 1; id < sites.length; id++) {
            sites[id] = HeapProxy.site(id);
            built[id] = HeapProxy.built(id);
        }
        for (int i = 0; i < report.length; i++) {
            System.out.println("count " + report[i].getTypeName() + " " + counts[i]);
        }
        for (int id = 1; id < sites.length; id++) {
            if (sites[id] > 0) System.out.println("site " + id + " " + sites[id]);
            if (built[id] > 0) System.out.println("built " + id + " " + built[id]);
        }
    }
}
