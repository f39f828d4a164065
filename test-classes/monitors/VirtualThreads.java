import java.lang.reflect.Method;

/**
 * Five virtual threads, named vt-0 to vt-4, each started and joined: the thread profiler reports them. Run on JDK
 * 21 and later. The builder is reached through reflection so that JDK 17's javac compiles this too: a runtime
 * image of a later JDK has no javac of its own (tests/support: Jdk::tools).
 */
public class VirtualThreads {
    public static void main(String[] args) throws Exception {
        Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
        Class<?> builderType = Class.forName("java.lang.Thread$Builder");
        Method name = builderType.getMethod("name", String.class);
        Method start = builderType.getMethod("start", Runnable.class);
        Thread[] threads = new Thread[5];
        for (int i = 0; i < threads.length; i++) {
            Object named = name.invoke(builder, "vt-" + i);
            threads[i] = (Thread) start.invoke(named, (Runnable) () -> {
                try {
                    Thread.sleep(10);
                } catch (InterruptedException e) {
                    throw new RuntimeException(e);
                }
            });
        }
        for (Thread t : threads) {
            t.join();
        }
        System.out.println("done");
    }
}
