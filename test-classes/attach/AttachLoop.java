import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.instrument.ClassFileTransformer;
import java.lang.instrument.Instrumentation;
import java.security.MessageDigest;
import java.security.ProtectionDomain;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A program for tests/attach.rs to attach to. It does nothing until told on stdin, so that the test knows the
 * exact work done between two reports; every answer ends with a line "ok".
 *
 *   run N T     T threads (default 1) call step() N times each: N*T calls, N*T Item objects
 *   clone N     one new Item, then N clones of it
 *   noise on    8 threads allocate and call in other classes until "noise off" (load while probes switch)
 *   spy JAR     loads JAR's java agent (AttachSpy) into this JVM, after the instr agent
 *   capture     the bytes ClassFileLoadHook sees now for AttachLoop, AttachLoop$Item and java.lang.Object,
 *               as "class NAME SHA-256 LENGTH" (retransformed through AttachSpy's Instrumentation)
 *   control CMD instr.Control.command(CMD): what it returns, or "refused: MESSAGE"
 *   keep N      N new Kept objects, held in a static list
 *   drop N      the N oldest Kept objects let go, then System.gc()
 *   contend N   N contended enters of one AttachLoop$Lock by the main thread, exactly
 *   busy MS     a new thread spins in Busy.spin for MS milliseconds
 *   spin MS     this (main) thread spins in Busy.spin for MS milliseconds
 *   codecache   the bytes of compiled code in the code heaps
 *   fullgcs     the full collections so far (G1's and Parallel's old-generation collectors)
 *   flag NAME   the value of the -XX flag NAME
 */
public class AttachLoop {
    static final class Item implements Cloneable {
        final int v;
        Item(int v) { this.v = v; }

        /** Object.clone: an allocation the VM makes (the VMObjectAlloc event), not a `new`. */
        Item copy() {
            try {
                return (Item) clone();
            } catch (CloneNotSupportedException e) {
                throw new AssertionError(e);
            }
        }
    }

    static final class Noise {
        static volatile boolean on;
        static volatile long sink;
        static void spin() {
            while (on) {
                Object[] o = new Object[4];
                o[0] = new StringBuilder().append(sink);
                sink += o.length + o[0].hashCode();
            }
        }
    }

    /** Objects whose number alive the test knows: those in KEPT. */
    static final class Kept {
        final long v;
        Kept(long v) { this.v = v; }
    }

    static final List<Kept> KEPT = new ArrayList<>();

    static final class Lock {}

    /**
     * N contended enters of a Lock, exactly: a holder thread takes the lock, lets this thread try, and
     * lets go only once this thread is blocked on it.
     */
    static void contend(int n) throws InterruptedException {
        Lock lock = new Lock();
        Thread self = Thread.currentThread();
        java.util.concurrent.Semaphore held = new java.util.concurrent.Semaphore(0);
        java.util.concurrent.Semaphore entered = new java.util.concurrent.Semaphore(0);
        Thread holder = new Thread(() -> {
            for (int i = 0; i < n; i++) {
                synchronized (lock) {
                    held.release();
                    while (self.getState() != Thread.State.BLOCKED) Thread.onSpinWait();
                }
                entered.acquireUninterruptibly();
            }
        }, "contend-holder");
        holder.start();
        for (int i = 0; i < n; i++) {
            held.acquire();
            synchronized (lock) {
                sink += i;
            }
            entered.release();
        }
        holder.join();
    }

    static final class Busy {
        static void spin(long millis) {
            long end = System.nanoTime() + millis * 1_000_000L;
            long x = 1;
            while (System.nanoTime() < end) {
                for (int i = 0; i < 1000; i++) x = x * 31 + i;
            }
            sink += x;
        }
    }

    static volatile long sink;

    /** One unit of the known work: one call, one Item, one int[1]. */
    static void step(int i) {
        Item it = new Item(i);
        int[] a = new int[1];
        a[0] = it.v;
        sink += a[0];
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        List<Thread> noise = new ArrayList<>();
        System.out.println("ok");
        String line;
        while ((line = in.readLine()) != null) {
            String[] w = line.trim().split(" ");
            switch (w[0]) {
                case "run": {
                    int n = Integer.parseInt(w[1]);
                    int t = w.length > 2 ? Integer.parseInt(w[2]) : 1;
                    Thread[] ts = new Thread[t];
                    for (int k = 0; k < t; k++) {
                        ts[k] = new Thread(() -> { for (int i = 0; i < n; i++) step(i); });
                        ts[k].start();
                    }
                    for (Thread th : ts) th.join();
                    break;
                }
                case "noise":
                    if (w[1].equals("on")) {
                        Noise.on = true;
                        for (int k = 0; k < 8; k++) {
                            Thread th = new Thread(Noise::spin, "noise-" + k);
                            th.setDaemon(true);
                            th.start();
                            noise.add(th);
                        }
                    } else {
                        Noise.on = false;
                        for (Thread th : noise) th.join();
                        noise.clear();
                    }
                    break;
                case "spy": {
                    String pid = String.valueOf(ProcessHandle.current().pid());
                    com.sun.tools.attach.VirtualMachine vm = com.sun.tools.attach.VirtualMachine.attach(pid);
                    try {
                        vm.loadAgent(w[1]);
                    } finally {
                        vm.detach();
                    }
                    if (AttachSpy.inst == null) throw new IllegalStateException("the spy did not start");
                    break;
                }
                case "clone": {
                    Item original = new Item(7);
                    for (int i = Integer.parseInt(w[1]); i > 0; i--) sink += original.copy().v;
                    break;
                }
                case "keep":
                    for (int i = Integer.parseInt(w[1]); i > 0; i--) KEPT.add(new Kept(i));
                    break;
                case "drop":
                    KEPT.subList(0, Integer.parseInt(w[1])).clear();
                    System.gc();
                    break;
                case "contend":
                    contend(Integer.parseInt(w[1]));
                    break;
                case "busy": {
                    long ms = Long.parseLong(w[1]);
                    Thread t = new Thread(() -> Busy.spin(ms), "busy");
                    t.start();
                    t.join();
                    break;
                }
                case "spin":
                    Busy.spin(Long.parseLong(w[1]));
                    break;
                case "capture":
                    capture();
                    break;
                case "codecache": {
                    // The bytes of compiled code the VM holds, every code heap together.
                    long used = 0;
                    for (java.lang.management.MemoryPoolMXBean p : java.lang.management.ManagementFactory.getMemoryPoolMXBeans()) {
                        if (p.getName().startsWith("CodeHeap") || p.getName().equals("Code Cache")) used += p.getUsage().getUsed();
                    }
                    System.out.println(used);
                    break;
                }
                case "flag":
                    // A -XX flag's value as the VM's management bean reads it.
                    System.out.println(java.lang.management.ManagementFactory
                            .getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class).getVMOption(w[1]).getValue());
                    break;
                case "fullgcs": {
                    // Full collections so far: G1's and Parallel's old-generation collectors count only those.
                    long full = 0;
                    for (java.lang.management.GarbageCollectorMXBean gc : java.lang.management.ManagementFactory.getGarbageCollectorMXBeans()) {
                        if (gc.getName().endsWith("Old Generation") || gc.getName().equals("PS MarkSweep")) full += gc.getCollectionCount();
                    }
                    System.out.println(full);
                    break;
                }
                case "control":
                    // instr.Control, the Java API of the control channel: its output, or the error it throws.
                    try {
                        System.out.print(instr.Control.command(line.substring("control ".length())));
                    } catch (IllegalArgumentException e) {
                        System.out.println("refused: " + e.getMessage());
                    }
                    break;
                default:
                    throw new IllegalArgumentException(line);
            }
            System.out.println("ok");
        }
    }

    static void capture() throws Exception {
        Instrumentation inst = AttachSpy.inst;
        Class<?>[] targets = {AttachLoop.class, Item.class, Object.class};
        Map<String, byte[]> seen = new ConcurrentHashMap<>();
        ClassFileTransformer spy = new ClassFileTransformer() {
            @Override
            public byte[] transform(ClassLoader loader, String name, Class<?> redefined, ProtectionDomain pd,
                    byte[] bytes) {
                for (Class<?> c : targets) {
                    if (c == redefined && c.getName().replace('.', '/').equals(name)) seen.put(name, bytes.clone());
                }
                return null;
            }
        };
        inst.addTransformer(spy, true);
        try {
            inst.retransformClasses(targets);
        } finally {
            inst.removeTransformer(spy);
        }
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        for (Map.Entry<String, byte[]> e : new java.util.TreeMap<>(seen).entrySet()) {
            StringBuilder hex = new StringBuilder();
            for (byte b : sha.digest(e.getValue())) hex.append(String.format("%02x", b));
            System.out.println("class " + e.getKey() + " " + hex + " " + e.getValue().length);
        }
    }
}
