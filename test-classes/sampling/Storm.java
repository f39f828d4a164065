import java.io.InputStream;
import java.lang.reflect.Method;

/**
 * A storm for the sampler: 16 threads run Java code while a loader thread defines a class in a fresh
 * class loader over and over, calls into it and drops it (the collector unloads them), so that samples
 * taken in a class's methods may have to be resolved after the class is gone. After SECONDS a worker
 * thread calls System.exit(3) while the others are still running.
 *
 * java Storm [SECONDS]   (default 20)
 */
public class Storm {
    static volatile long sink;

    public static class Payload {
        public static long work(long x) {
            for (int i = 0; i < 20_000; i++) {
                x = x * 31 + i;
            }
            return x;
        }
    }

    static class OneClassLoader extends ClassLoader {
        private final byte[] bytes;

        OneClassLoader(byte[] bytes) {
            super(null);
            this.bytes = bytes;
        }

        @Override
        protected Class<?> findClass(String name) throws ClassNotFoundException {
            if (name.equals("Storm$Payload")) {
                return defineClass(name, bytes, 0, bytes.length);
            }
            throw new ClassNotFoundException(name);
        }
    }

    static long compute(long x) {
        for (int i = 0; i < 10_000; i++) {
            x = (x << 1) ^ (x >>> 3) ^ i;
        }
        return x;
    }

    public static void main(String[] args) throws Exception {
        long seconds = args.length > 0 ? Long.parseLong(args[0]) : 20;
        byte[] bytes;
        try (InputStream in = Storm.class.getResourceAsStream("Storm$Payload.class")) {
            bytes = in.readAllBytes();
        }
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        for (int t = 0; t < 15; t++) {
            Thread w = new Thread(() -> {
                long x = 1;
                while (true) {
                    x = compute(x);
                    sink = x;
                }
            }, "storm-" + t);
            w.setDaemon(true);
            w.start();
        }
        Thread loader = new Thread(() -> {
            long x = 1;
            try {
                for (int n = 0; ; n++) {
                    Class<?> c = new OneClassLoader(bytes).loadClass("Storm$Payload");
                    Method m = c.getMethod("work", long.class);
                    x = (Long) m.invoke(null, x);
                    if (n % 200 == 0) {
                        System.gc();
                    }
                    if (System.nanoTime() > end) {
                        System.out.println("loaded " + n + " classes");
                        System.exit(3);
                    }
                }
            } catch (Exception e) {
                e.printStackTrace();
                System.exit(1);
            }
        }, "storm-loader");
        loader.start();
        loader.join();
    }
}
