// Sampled allocation stacks (tests/agent.rs): one allocation site, leaf(), reached from viaA three times as often
// as from viaB, 400,000 times in all. With depth=4,stacks=4k the site's count must stay exactly 400,000, split
// over the two stacks the heap sampler saw in about a 3:1 ratio.
public class SampledStacks {
    static final class Item { long a, b; }
    static final Item[] kept = new Item[16];

    static void leaf(int i) {
        kept[i & 15] = new Item();
    }

    static void viaA(int i) { leaf(i); }

    static void viaB(int i) { leaf(i); }

    public static void main(String[] args) {
        for (int i = 0; i < 400_000; i++) {
            if (i % 4 == 3) viaB(i);
            else viaA(i);
        }
        System.out.println("done " + kept.length);
    }
}
