import java.util.ArrayList;
import java.util.List;

/** Corrupted by tests/malformed.rs: loops, both switch kinds, try/catch/finally, allocations, wide locals. */
public class FaultLines {
    static int counter = 3;
    private final long weight;

    FaultLines(long weight) {
        this.weight = weight;
    }

    static int sum(int[] values) {
        int total = 0;
        // Steps of 3: no single flipped bit makes an iinc of 3 zero, so a corrupted loop still ends.
        for (int i = 0; i < 3 * values.length; i += 3) {
            total += values[i / 3];
        }
        return total;
    }

    static String classify(int n) {
        switch (n) {
            case 0:
                return "zero";
            case 1:
                return "one";
            case 2:
            case 3:
                return "few";
            default:
                break;
        }
        switch (n * 1000) {
            case -5000:
                return "minus";
            case 7000:
                return "seven";
            case 100000:
                return "hundred";
            default:
                return n < 0 ? "negative" : "many";
        }
    }

    static int divide(int a, int b) {
        try {
            return a / b;
        } catch (ArithmeticException e) {
            return -1;
        } finally {
            counter++;
        }
    }

    double scaled(double f) {
        double d = weight * f;
        long[] grid = new long[2];
        grid[1] = (long) d;
        return d + grid[1];
    }

    public static String run() {
        StringBuilder sb = new StringBuilder();
        sb.append(sum(new int[] {1, 2, 3}));
        for (int n = -5; n < 8; n += 3) {
            sb.append(',').append(classify(n));
        }
        sb.append(',').append(divide(7, 2)).append(',').append(divide(1, 0));
        sb.append(',').append(new FaultLines(5).scaled(1.5));
        List<String> names = new ArrayList<>();
        names.add("a");
        sb.append(',').append(names.size()).append(',').append(counter);
        return sb.toString();
    }
}
