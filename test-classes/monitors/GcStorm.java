/**
 * Collections while the XML trace records allocations, for the trace's GC and OBJECT_FREE path: four
 * threads each allocate 2,000 traced GcStorm$Node objects (one in 100 kept until the thread ends) and,
 * between them, 64 MB of untraced byte arrays, so that a small heap (-Xmx32m) collects many times while
 * they run; meanwhile main calls System.gc() 40 times. Once every thread is done, a last System.gc():
 * the heap is then nearly empty, so no collection is expected while the VM shuts down.
 */
public class GcStorm {
    static final class Node {
        final int n;
        final Node next;

        Node(int n, Node next) {
            this.n = n;
            this.next = next;
        }
    }

    static volatile Object sink;

    public static void main(String[] args) throws Exception {
        Thread[] workers = new Thread[4];
        for (int t = 0; t < workers.length; t++) {
            workers[t] = new Thread(() -> {
                Node kept = null;
                for (int i = 0; i < 2000; i++) {
                    Node n = new Node(i, kept);
                    if (i % 100 == 0) {
                        kept = n;
                    }
                    for (int k = 0; k < 8; k++) {
                        sink = new byte[4096];
                    }
                }
                sink = kept;
            }, "storm-" + t);
            workers[t].start();
        }
        for (int i = 0; i < 40; i++) {
            System.gc();
        }
        for (Thread w : workers) {
            w.join();
        }
        sink = null;
        System.gc();
        System.out.println("done");
    }
}
