// The class whose rewritten bytecode tests/snapshots/ pins down: one of each probe site (entry, returns,
// an exception leaving the method, a constructor with its super() call, an array allocation).
public class Snapshot {
    private final int[] data;

    Snapshot(int n) {
        super();
        data = new int[n];
    }

    static int pick(int[] a, int i) {
        if (i < 0) {
            throw new IllegalArgumentException();
        }
        return a[i];
    }

    public static void main(String[] args) {
        System.out.println(pick(new Snapshot(3).data, 1));
    }
}
