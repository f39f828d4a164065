// Every kind of array allocation: newarray of all eight primitive types, anewarray of classes, interfaces and
// arrays, multianewarray with all and with only some dimensions given, array initializers (newarray; dup; ...
// xastore), zero-length arrays, allocation failures caught by a handler right after the allocation, arrays used
// as method arguments and return values, clone(), and allocations inside expressions whose values stay on the
// operand stack across the allocation.
public class ArrayKinds {
    static long checksum(Object o) {
        if (o == null) return 7;
        if (o instanceof boolean[] a) { long h = a.length; for (boolean v : a) h = h * 3 + (v ? 1 : 2); return h; }
        if (o instanceof byte[] a) { long h = a.length; for (byte v : a) h = h * 31 + v; return h; }
        if (o instanceof char[] a) { long h = a.length; for (char v : a) h = h * 31 + v; return h; }
        if (o instanceof short[] a) { long h = a.length; for (short v : a) h = h * 31 + v; return h; }
        if (o instanceof int[] a) { long h = a.length; for (int v : a) h = h * 31 + v; return h; }
        if (o instanceof long[] a) { long h = a.length; for (long v : a) h = h * 31 + v; return h; }
        if (o instanceof float[] a) { long h = a.length; for (float v : a) h = h * 31 + Float.floatToIntBits(v); return h; }
        if (o instanceof double[] a) { long h = a.length; for (double v : a) h = h * 31 + Double.doubleToLongBits(v); return h; }
        if (o instanceof Object[] a) { long h = a.length + 1000; for (Object v : a) h = h * 37 + checksum(v); return h; }
        return o.toString().length();
    }

    static Object[] primitives(int n) {
        boolean[] z = new boolean[n];
        byte[] b = new byte[n];
        char[] c = new char[n];
        short[] s = new short[n];
        int[] i = new int[n];
        long[] j = new long[n];
        float[] f = new float[n];
        double[] d = new double[n];
        for (int k = 0; k < n; k++) {
            z[k] = k % 2 == 0;
            b[k] = (byte) (k * 50);
            c[k] = (char) ('a' + k);
            s[k] = (short) (k * 1000);
            i[k] = k * k;
            j[k] = (long) k << 33;
            f[k] = k / 4f;
            d[k] = k / 8d;
        }
        return new Object[] {z, b, c, s, i, j, f, d};
    }

    static Object[] initializers() {
        return new Object[] {
            new boolean[] {true, false, true},
            new byte[] {1, -2, 3},
            new char[] {'x', 'y'},
            new short[] {300, -300},
            new int[] {1, 2, 3, 4, 5, 6, 7},
            new long[] {Long.MIN_VALUE, 0, Long.MAX_VALUE},
            new float[] {1.5f, Float.NaN},
            new double[] {Math.PI, -0.0},
            new String[] {"a", null, "c"},
            new int[][] {{1}, {2, 3}, {}},
            new Object[0],
            new int[0][0],
        };
    }

    static Object[] multi(int a, int b, int c) {
        int[][] full2 = new int[a][b];
        long[][][] full3 = new long[a][b][c];
        String[][][] partial = new String[a][b][];           // multianewarray with 2 of 3 dimensions
        Object[][] onlyFirst = new Object[a][];               // anewarray of an array class
        Runnable[][] ifaces = new Runnable[b][a];
        double[][][][] four = new double[1][a][1][b];
        for (int x = 0; x < a; x++) {
            onlyFirst[x] = new Integer[x + 1];
            for (int y = 0; y < b; y++) {
                full2[x][y] = x * 10 + y;
                partial[x][y] = new String[] {"p" + x + y};
                for (int z = 0; z < c; z++) full3[x][y][z] = x * 100 + y * 10 + z;
            }
        }
        return new Object[] {full2, full3, partial, onlyFirst, ifaces, four};
    }

    // the allocation throws: the handler must cover the newarray (and any byte inserted after it)
    static String failing(int n) {
        StringBuilder sb = new StringBuilder();
        try {
            sb.append(new byte[n].length);
        } catch (NegativeArraySizeException e) {
            sb.append("neg1");
        }
        try {
            sb.append(new String[n].length);
        } catch (NegativeArraySizeException e) {
            sb.append("neg2");
        }
        try {
            sb.append(new int[1][n].length);
        } catch (NegativeArraySizeException e) {
            sb.append("neg3");
        }
        return sb.toString();
    }

    // values already on the operand stack below each allocation
    static long onStack(int n) {
        return n + new int[n].length * 2L + (n > 1 ? new long[n - 1].length : new char[3].length)
                + sum(new short[n], new Object[n + 1][n], n);
    }

    static long sum(short[] a, Object[][] b, int n) {
        return a.length + b.length * 100L + b[0].length * 10000L + n;
    }

    static int[] grow(int[] a) {
        int[] b = a.clone();
        int[] c = java.util.Arrays.copyOf(b, b.length * 2 + 1);
        c[c.length - 1] = -1;
        return c;
    }

    public static void main(String[] args) {
        StringBuilder sb = new StringBuilder("ArrayKinds");
        sb.append(' ').append(checksum(primitives(0))).append(' ').append(checksum(primitives(5)));
        sb.append(' ').append(checksum(initializers()));
        sb.append(' ').append(checksum(multi(2, 3, 4))).append(' ').append(checksum(multi(0, 2, 2)));
        sb.append(' ').append(failing(2)).append(' ').append(failing(-1));
        sb.append(' ').append(onStack(1)).append(' ').append(onStack(4));
        sb.append(' ').append(java.util.Arrays.toString(grow(new int[] {4, 5})));
        sb.append(' ').append(new int[3][4][5][0][0].length).append(' ').append(new String[2][0].getClass().getName());
        System.out.println(sb);
    }
}
