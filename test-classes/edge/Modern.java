import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.IntBinaryOperator;
import java.util.function.Supplier;

// Java 17 class-file features: records (Record attribute, ObjectMethods bootstrap), sealed hierarchies
// (PermittedSubclasses), nestmates (NestHost/NestMembers, private access without bridges), string concatenation
// through invokedynamic makeConcatWithConstants (including constants with \1 and \2 in them), lambdas and method
// references (LambdaMetafactory; a serializable lambda adds $deserializeLambda$), enums with constant bodies,
// inner/local/anonymous classes, interface default/static/private methods, synchronized methods and blocks.
public class Modern {
    // ---- records and sealed types
    sealed interface Shape permits Circle, Rect, Poly {}

    record Circle(double r) implements Shape {
        Circle {
            if (r < 0) throw new IllegalArgumentException("negative radius");
        }
    }

    record Rect(int w, int h) implements Shape {
        static Rect square(int s) {
            return new Rect(s, s);
        }

        int area() {
            return w * h;
        }
    }

    static non-sealed class Poly implements Shape {
        final int[] xs;

        Poly(int... xs) {
            this.xs = xs;
        }
    }

    static final class Tri extends Poly {
        Tri() {
            super(0, 1, 2);
        }
    }

    record Named<T>(String name, T value, List<String> tags) {}

    static String describe(Shape s) {
        if (s instanceof Circle c) return "circle " + c.r();
        if (s instanceof Rect r && r.w() == r.h()) return "square " + r.area();
        if (s instanceof Rect r) return "rect " + r.area();
        return "poly " + ((Poly) s).xs.length;
    }

    // ---- nestmates: private members used across nested classes, no access bridges
    private int secret = 41;

    private static String hidden(String s) {
        return "<" + s + ">";
    }

    class Inner {
        private int mine = 1;

        int peek() {
            return secret + mine;
        }
    }

    static class Other {
        private String poke(Modern m) {
            m.secret++;
            Inner in = m.new Inner();
            in.mine = 10;
            return hidden("poked") + in.peek();
        }
    }

    // ---- string concatenation (indy), with constants containing the recipe's tag characters
    static String concat(int i, long l, char c, double d, Object o, boolean z) {
        return "i=" + i + " l=" + l + " c=" + c + " d=" + d + " o=" + o + " z=" + z + " tags=\u0001\u0002 " + null;
    }

    // ---- lambdas and method references
    interface SerFn extends Function<Integer, Integer>, Serializable {}

    static int lambdas(int base) {
        int captured = base * 2;
        IntBinaryOperator add = (a, b) -> a + b + captured;
        Function<String, Integer> len = String::length;
        Supplier<List<String>> mk = ArrayList::new;
        Function<Integer, int[]> arr = int[]::new;
        SerFn ser = x -> x * 3 + base;
        List<String> l = mk.get();
        l.add("abc");
        return add.applyAsInt(1, 2) + len.apply(l.get(0)) + arr.apply(4).length + ser.apply(5);
    }

    // ---- enums with constant-specific bodies and a constructor
    enum Op {
        ADD("+") {
            @Override
            int apply(int a, int b) {
                return a + b;
            }
        },
        MUL("*") {
            @Override
            int apply(int a, int b) {
                return a * b;
            }
        },
        NEG("~") {
            @Override
            int apply(int a, int b) {
                return -a;
            }
        };

        final String sym;

        Op(String sym) {
            this.sym = sym;
        }

        abstract int apply(int a, int b);
    }

    // ---- interfaces with default, static and private methods
    interface Greeter {
        String name();

        default String greet() {
            return prefix() + name() + suffix();
        }

        private String prefix() {
            return "hello ";
        }

        static String suffix() {
            return "!";
        }
    }

    // ---- inner, local and anonymous classes
    String innerClasses(int k) {
        class Local implements Greeter {
            @Override
            public String name() {
                return "local" + k + secret;
            }
        }
        Greeter anon = new Greeter() {
            @Override
            public String name() {
                return "anon" + (k + 1);
            }
        };
        return new Local().greet() + " " + anon.greet() + " " + new Inner().peek();
    }

    // ---- synchronized methods and blocks (monitorenter/monitorexit with their catch-all handlers)
    private int counter;

    synchronized int bump(int by) {
        counter += by;
        return counter;
    }

    static synchronized int staticSync(int x) {
        return x + 1;
    }

    int blocks(Object lock, int n) {
        int r = 0;
        for (int i = 0; i < n; i++) {
            synchronized (lock) {
                synchronized (this) {
                    if (i == 3) continue;
                    r += bump(i);
                }
                if (r > 1000) return r;
            }
        }
        synchronized (lock) {
            try {
                if (n < 0) throw new IllegalStateException();
            } catch (IllegalStateException e) {
                return -1;
            }
        }
        return r;
    }

    public static void main(String[] args) throws Exception {
        StringBuilder sb = new StringBuilder("Modern");
        Shape[] shapes = {new Circle(1.5), new Rect(2, 3), Rect.square(4), new Poly(1, 2, 3, 4), new Tri()};
        for (Shape s : shapes) sb.append(" | ").append(describe(s));
        sb.append(" | ").append(new Rect(2, 3)).append(' ').append(new Rect(2, 3).equals(new Rect(2, 3)))
          .append(' ').append(new Rect(2, 3).hashCode() == new Rect(2, 3).hashCode())
          .append(' ').append(new Named<>("n", 7, List.of("x", "y")));
        try {
            new Circle(-1);
        } catch (IllegalArgumentException e) {
            sb.append(" | ").append(e.getMessage());
        }
        Modern m = new Modern();
        sb.append(" | ").append(new Other().poke(m)).append(' ').append(m.secret);
        sb.append(" | ").append(concat(-3, 1L << 40, 'q', 0.25, List.of(1), true));
        sb.append(" | ").append(lambdas(10));
        for (Op op : Op.values()) sb.append(' ').append(op).append(op.sym).append(op.apply(6, 7));
        sb.append(" | ").append(m.innerClasses(5));
        sb.append(" | ").append(m.blocks(new Object(), 6)).append(' ').append(m.blocks(new Object(), -1))
          .append(' ').append(staticSync(1));
        System.out.println(sb);
    }
}
