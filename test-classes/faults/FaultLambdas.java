import java.util.function.IntBinaryOperator;

/** Corrupted by tests/malformed.rs: invokedynamic (lambdas, method refs, string concatenation), a string switch,
 *  multianewarray, a type pattern and a synchronized block. */
public class FaultLambdas {
    static String name(String s) {
        switch (s) {
            case "alpha":
                return "A";
            case "beta":
                return "B";
            default:
                return "?" + s;
        }
    }

    static int apply(IntBinaryOperator op, int a, int b) {
        return op.applyAsInt(a, b);
    }

    static int grid(int n) {
        int[][] g = new int[n][n + 1];
        int total = 0;
        // Steps of 3: no single flipped bit makes an iinc of 3 zero, so a corrupted loop still ends.
        for (int i = 0; i < 3 * g.length; i += 3) {
            total += g[i / 3].length;
        }
        return total;
    }

    public static String run() {
        int base = 10;
        String r = name("alpha") + name("beta") + name("gamma");
        r += ":" + apply((a, b) -> a * b + base, 3, 4) + ":" + apply(Math::max, 3, 4);
        r += ":" + grid(3);
        Object o = r.length() > 5 ? (Object) r : Integer.valueOf(1);
        if (o instanceof String s) {
            r += s.length();
        }
        synchronized (FaultLambdas.class) {
            r += "!";
        }
        return r;
    }
}
