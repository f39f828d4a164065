// Live objects at exit (tests/agent.rs): allocates N nodes (10,000, or -Dnodes=N), keeps every fourth reachable
// from a static field, drops the rest and asks for a GC. The agent's live tracking must report exactly N/4 live
// LiveObjects$Node in exact mode and about N/4 when sampling.
public class LiveObjects {
    static class Node { long a, b; }
    static Node[] kept;

    public static void main(String[] args) {
        int nodes = Integer.getInteger("nodes", 10_000);
        kept = new Node[nodes / 4];
        for (int i = 0; i < nodes; i++) {
            Node n = new Node();
            if (i % 4 == 0) kept[i / 4] = n;
        }
        System.gc();
        System.out.println("kept " + kept.length);
    }
}
