import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.ArrayList;
import java.util.List;

/**
 * Keeps known objects alive for tests/hprof.rs: 1,234 HprofLeaf made in makeLeaves, 10 HprofBase,
 * 55 HprofLeaf[] of 3 elements, one marked leaf with known field values, strings; then prints "ready"
 * and waits for a line on stdin (the test takes its dumps meanwhile) before it exits.
 */
public class HprofTarget {
    static final List<Object> KEEP = new ArrayList<>();
    static HprofLeaf marked;
    static int statics = 31337;

    static void makeLeaves(int n) {
        for (int i = 0; i < n; i++) {
            KEEP.add(new HprofLeaf(i, "leaf-" + i, i * 3L, null));
        }
    }

    public static void main(String[] args) throws Exception {
        makeLeaves(1234);
        for (int i = 0; i < 10; i++) {
            KEEP.add(new HprofBase(-i, "base-" + i));
        }
        for (int i = 0; i < 55; i++) {
            HprofLeaf[] a = new HprofLeaf[3];
            a[1] = (HprofLeaf) KEEP.get(i);
            KEEP.add(a);
        }
        marked = new HprofLeaf(4242, "marked", 1L << 40, new int[] {7, 8, 9});
        System.out.println("ready");
        System.out.flush();
        new BufferedReader(new InputStreamReader(System.in)).readLine();
        System.out.println("done " + KEEP.size() + " " + marked.label);
    }
}

class HprofBase {
    static String baseStatic = "base-static";
    int baseValue;
    String label;

    HprofBase(int v, String label) {
        this.baseValue = v;
        this.label = label;
    }
}

class HprofLeaf extends HprofBase {
    long leafValue;
    Object next;
    boolean flag = true;

    HprofLeaf(int v, String label, long leafValue, Object next) {
        super(v, label);
        this.leafValue = leafValue;
        this.next = next;
    }
}
