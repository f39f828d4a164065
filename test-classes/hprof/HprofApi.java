import instr.Counts;

import java.util.ArrayList;
import java.util.List;

/** A heap dump asked for by the program itself (instr.Counts.heapDump) with 321 HprofApiItem alive. */
public class HprofApi {
    static final class HprofApiItem {
        final int n;
        HprofApiItem(int n) { this.n = n; }
    }

    public static void main(String[] args) {
        List<HprofApiItem> keep = new ArrayList<>();
        for (int i = 0; i < 321; i++) keep.add(new HprofApiItem(i));
        System.out.println("dumped " + Counts.heapDump());
        System.out.println("kept " + keep.size());
    }
}
