/**
 * A caller whose speed depends on the profile of a method it inlines, for bench/recompile-hold.sh.
 *
 * {@code Caller.sum} is in a class without an allocation site, so a start of the allocation probes leaves
 * it alone; {@code Geometry.area}, which it calls and C2 inlines, has one, so a start and a stop redefine
 * it. Inside {@code area}, {@code shape.area()} calls an interface with three implementations loaded and
 * only one ever seen there: with {@code area}'s profile C2 inlines {@code Square.area} behind a class
 * check; without it, C2 makes an interface call. Each call of {@link #main} runs 25,000 sums over 4,096
 * squares.
 */
public final class ProfiledCallee {
    interface Shape {
        double area();
    }

    static final class Square implements Shape {
        final double side;

        Square(double side) {
            this.side = side;
        }

        public double area() {
            return side * side;
        }
    }

    static final class Circle implements Shape {
        final double radius;

        Circle(double radius) {
            this.radius = radius;
        }

        public double area() {
            return Math.PI * radius * radius;
        }
    }

    static final class Triangle implements Shape {
        final double base, height;

        Triangle(double base, double height) {
            this.base = base;
            this.height = height;
        }

        public double area() {
            return base * height / 2;
        }
    }

    static final class Geometry {
        static double area(Shape[] shapes, int from, int to) {
            double sum = 0;
            for (int i = from; i < to; i++) sum += shapes[i].area();
            if (Double.isNaN(sum)) throw new IllegalStateException("a shape of no area");
            return sum;
        }
    }

    static final class Caller {
        static double sum(Shape[] shapes) {
            double total = 0;
            for (int at = 0; at < shapes.length; at += 8) total += Geometry.area(shapes, at, at + 8);
            return total;
        }
    }

    static final Shape[] SQUARES = new Shape[4096];
    static final Shape[] OTHERS = { new Circle(1), new Triangle(1, 2) };
    static double sink;

    static {
        for (int i = 0; i < SQUARES.length; i++) SQUARES[i] = new Square(i % 7);
    }

    public static void main(String[] args) {
        for (int r = 0; r < 25_000; r++) sink += Caller.sum(SQUARES);
        sink += OTHERS[0].area() + OTHERS[1].area();
    }
}
