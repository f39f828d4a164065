// Exactly known allocations for the agent tests (tests/agent.rs): N objects of a class, arrays of every
// kind including multi-dimensional, allocations from 8 threads, in a static initialiser, and through
// reflection and MethodHandles, and objects the VM allocates itself (clone, Unsafe.allocateInstance,
// Array.newInstance). Prints nothing that depends on the agent; the test reads the JSON report.
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

public class AllocCounts {
    static class Plain { int v; }
    static class Threaded { long v; }
    static class Reflected { }
    // Cloneable, made by reflection: the VM reports it (JDK 17's native accessor) and the agent looks at the
    // stack, which must not take it for a clone: its constructor runs and counts it.
    static class ReflectedCloneable implements Cloneable { }
    static class Handled { }
    static class FromStatic { }
    static class Cloned implements Cloneable {
        Cloned copy() throws CloneNotSupportedException { return (Cloned) clone(); }
    }
    static class Unsafed { }

    static class Holder {
        static final Object[] made = new Object[3];
        static {
            for (int i = 0; i < 3; i++) made[i] = new FromStatic();
        }
    }

    static Object sink;

    public static void main(String[] args) throws Throwable {
        for (int i = 0; i < 1000; i++) sink = new Plain();

        for (int i = 0; i < 7; i++) {
            sink = new boolean[1]; sink = new byte[1]; sink = new char[1]; sink = new short[1];
            sink = new int[1]; sink = new long[1]; sink = new float[1]; sink = new double[1];
            sink = new Plain[1];
        }
        sink = new Plain[2][3];          // 1 Plain[][] + 2 Plain[]
        sink = new double[4][5][6];      // 1 + 4 + 20

        Thread[] threads = new Thread[8];
        for (int t = 0; t < threads.length; t++) {
            threads[t] = new Thread(() -> {
                for (int i = 0; i < 10_000; i++) sink = new Threaded();
            });
            threads[t].start();
        }
        for (Thread t : threads) t.join();

        sink = Holder.made;

        for (int i = 0; i < 50; i++) sink = Reflected.class.getDeclaredConstructor().newInstance();
        for (int i = 0; i < 30; i++) sink = ReflectedCloneable.class.getDeclaredConstructor().newInstance();
        MethodHandle ctor = MethodHandles.lookup().findConstructor(Handled.class, MethodType.methodType(void.class));
        for (int i = 0; i < 60; i++) sink = (Handled) ctor.invoke();

        // Allocated by the VM without the watched bytecode (VMObjectAlloc).
        Cloned proto = new Cloned();
        for (int i = 0; i < 70; i++) sink = proto.copy();                        // 1 + 70 Cloned
        Reflected[] protoArray = new Reflected[4];
        for (int i = 0; i < 40; i++) sink = protoArray.clone();                  // 1 + 40 Reflected[]
        for (int i = 0; i < 90; i++) sink = java.lang.reflect.Array.newInstance(Handled.class, 2); // 90 Handled[]
        sink = java.lang.reflect.Array.newInstance(Unsafed.class, 2, 3);        // 1 Unsafed[][] + 2 Unsafed[]
        java.lang.reflect.Field f = sun.misc.Unsafe.class.getDeclaredField("theUnsafe");
        f.setAccessible(true);
        sun.misc.Unsafe unsafe = (sun.misc.Unsafe) f.get(null);
        for (int i = 0; i < 80; i++) sink = unsafe.allocateInstance(Unsafed.class); // not reported by HotSpot
        System.out.println("done");
    }
}
