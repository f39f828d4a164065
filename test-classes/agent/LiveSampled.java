// Live objects chosen by the JVM's heap sampler (tests/agent.rs): allocates 1,000,000 nodes of 32 bytes, keeps
// every fourth (250,000) reachable from a static field, drops the rest and asks for a GC. With live=16k the
// report must estimate about 250,000 live LiveSampled$Node from roughly 500 live samples.
public class LiveSampled {
    static class Node { long a, b; }
    static Node[] kept;

    public static void main(String[] args) {
        kept = new Node[250_000];
        for (int i = 0; i < 1_000_000; i++) {
            Node n = new Node();
            if (i % 4 == 0) kept[i / 4] = n;
        }
        System.gc();
        System.out.println("kept " + kept.length);
    }
}
