// Live objects at exit (tests/agent.rs): allocates 10,000 nodes, keeps every fourth (2,500) reachable from a
// static field, drops the rest and asks for a GC. The agent's live tracking must report exactly 2,500 live
// LiveObjects$Node in exact mode and about 2,500 when sampling.
public class LiveObjects {
    static class Node { long a, b; }
    static Node[] kept;

    public static void main(String[] args) {
        kept = new Node[2500];
        for (int i = 0; i < 10_000; i++) {
            Node n = new Node();
            if (i % 4 == 0) kept[i / 4] = n;
        }
        System.gc();
        System.out.println("kept " + kept.length);
    }
}
