// Constructors that branch before super()/this() (StackMapTable frames with uninitializedThis), and `new X` ... `dup`
// ... `invokespecial X.<init>` sequences whose arguments branch or allocate arrays (frames holding
// Uninitialized(offset of the new), an offset that moves when bytes are inserted before it).
public class Ctors {
    static class Base {
        final String tag;
        final int size;

        Base(String tag, int size) {
            this.tag = tag;
            this.size = size;
        }

        Base(int[] data) {
            this("arr", data.length);
        }

        @Override
        public String toString() {
            return tag + ":" + size;
        }
    }

    static class Child extends Base {
        // branches before super(): uninitializedThis in the frames of the ?: join points
        Child(boolean c, String a, String b) {
            super(c ? a : b, c ? a.length() : -b.length());
        }

        // this() with branches and an array allocation in its arguments
        Child(int x) {
            this(x > 0, x > 10 ? "big" : x > 0 ? "small" : "none", new String[] {"neg", "zero"}[x < 0 ? 0 : 1]);
        }

        // super() whose argument is a freshly allocated array, after a branch
        Child(int n, boolean twice) {
            super(new int[twice ? n * 2 : n]);
        }

        // a switch expression before super()
        Child(char kind) {
            super(switch (kind) {
                case 'a' -> "alpha";
                case 'b' -> "beta";
                default -> {
                    String s = String.valueOf(kind);
                    yield s + s;
                }
            }, kind);
        }
    }

    static final class Pair {
        final long[] data;
        final int tag;

        Pair(long[] data, int tag) {
            this.data = data;
            this.tag = tag;
        }

        @Override
        public String toString() {
            return "Pair(" + data.length + "," + tag + ")";
        }
    }

    static final class Box {
        final Object a;
        final Object b;

        Box(Object a, Object b) {
            this.a = a;
            this.b = b;
        }

        @Override
        public String toString() {
            return "Box[" + a + "," + b + "]";
        }
    }

    // new Pair; dup; <newarray long>; <branch>; invokespecial: Uninitialized(new) on the stack across the branch
    static Pair pair(int n, boolean c) {
        return new Pair(new long[n], c ? 1 : 2);
    }

    // two uninitialized objects on the stack at once, the inner one created inside a branch
    static Box nestedNew(int k) {
        return new Box(k > 0 ? new Box(new int[k].length, k % 2 == 0 ? "even" : "odd") : null,
                       new Pair(new long[k < 0 ? 0 : k], k > 5 ? 6 : 5));
    }

    // nested conditionals and an array initializer: many frames with the uninitialized Box on the stack
    static Box chain(int a, int b, int c) {
        return new Box(a > b ? (b > c ? "abc" : a > c ? "acb" : "cab") : (a > c ? "bac" : b > c ? "bca" : "cba"),
                       java.util.Arrays.asList(a < 0 ? null : Integer.valueOf(a), new int[b < 0 ? 0 : b].length));
    }

    static String threw(int n) {
        try {
            return new Pair(new long[n], n).toString();
        } catch (NegativeArraySizeException e) {
            return "negative";
        }
    }

    public static void main(String[] args) {
        StringBuilder sb = new StringBuilder("Ctors");
        sb.append(' ').append(new Child(true, "left", "right")).append(' ').append(new Child(false, "left", "right"));
        for (int x : new int[] {-5, 0, 3, 42}) sb.append(' ').append(new Child(x));
        sb.append(' ').append(new Child(3, true)).append(' ').append(new Child(3, false));
        sb.append(' ').append(new Child('a')).append(' ').append(new Child('z'));
        sb.append(' ').append(pair(3, true)).append(' ').append(pair(0, false));
        for (int k = -1; k < 8; k += 3) sb.append(' ').append(nestedNew(k));
        sb.append(' ').append(chain(1, 2, 3)).append(' ').append(chain(3, 2, 1)).append(' ').append(chain(2, 3, 1));
        sb.append(' ').append(threw(2)).append(' ').append(threw(-2));
        System.out.println(sb);
    }
}
