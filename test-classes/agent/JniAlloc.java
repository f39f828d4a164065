// Objects made by native code (tests/agent.rs): 30 by JNI AllocObject, which runs no constructor, and 20
// by JNI NewObject, which runs one. Both must be counted exactly once. Then JNI's IsVirtualThread, which
// comes after every function of JNI 9 in the table the agent rewrites to wrap AllocObject: it must still be
// the VM's (0 for a platform thread; -1 on a JDK before 21, which has none). The test builds libjnialloc.so.
public class JniAlloc {
    static class ByAllocObject { }
    static class ByNewObject { }

    static native Object allocObject(Class<?> c);
    static native Object newObject(Class<?> c);
    static native int isVirtualThread(Thread t);

    static Object sink;

    public static void main(String[] args) {
        System.loadLibrary("jnialloc");
        for (int i = 0; i < 30; i++) sink = allocObject(ByAllocObject.class);
        for (int i = 0; i < 20; i++) sink = newObject(ByNewObject.class);
        System.out.println("isVirtualThread: " + isVirtualThread(Thread.currentThread()));
        System.out.println("done");
    }
}
