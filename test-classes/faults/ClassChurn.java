// The fault suite's (tests/faults.rs) class-loader churn: 10,000 classes, each defined in a throw-away
// class loader, instantiated, called and dropped. 9,000 are the same bytes (the class ChurnA0000 below,
// one Class per loader), 1,000 carry distinct names (ChurnA0001..ChurnA1000: the same bytes with the
// name's digits replaced, every occurrence, so the class stays valid). After System.gc() their loaders are
// unreachable and the classes should unload.
// stdout is one line that does not depend on the agent; stderr gets one "churn:" line of measurements for
// the test: classes unloaded (JMX), the peak RSS (VmHWM) and Metaspace in use after the warm-up round and
// at the end. `ClassChurn SAME DISTINCT` churns other numbers of classes.
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.reflect.Constructor;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.function.IntSupplier;

public class ClassChurn {
    static int SAME = 9_000;
    static int DISTINCT = 1_000;
    static final String NAME = "ChurnA0000";

    static final class OneShotLoader extends ClassLoader {
        OneShotLoader() {
            super(ClassChurn.class.getClassLoader());
        }

        Class<?> define(String name, byte[] bytes) {
            return defineClass(name, bytes, 0, bytes.length);
        }
    }

    static long total;

    static void churn(byte[] bytes, String name) throws Exception {
        Class<?> c = new OneShotLoader().define(name, bytes);
        // Another loader is another runtime package: the package-private constructor needs opening (the
        // unnamed module opens everything).
        Constructor<?> make = c.getDeclaredConstructor();
        make.setAccessible(true);
        IntSupplier s = (IntSupplier) make.newInstance();
        total += s.getAsInt();
    }

    static byte[] renamed(byte[] bytes, String from, String to) {
        byte[] f = from.getBytes(StandardCharsets.US_ASCII);
        byte[] t = to.getBytes(StandardCharsets.US_ASCII);
        byte[] out = bytes.clone();
        for (int i = 0; i + f.length <= out.length; i++) {
            boolean match = true;
            for (int k = 0; k < f.length && match; k++) {
                match = out[i + k] == f[k];
            }
            if (match) {
                System.arraycopy(t, 0, out, i, t.length);
            }
        }
        return out;
    }

    static long metaspaceUsed() {
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getName().equals("Metaspace")) {
                return pool.getUsage().getUsed();
            }
        }
        return -1;
    }

    static void collect() throws InterruptedException {
        // Class unloading needs the loaders found unreachable by a full collection; a few rounds let any
        // reference queue or cleaner in between drop its last hold.
        for (int i = 0; i < 4; i++) {
            System.gc();
            Thread.sleep(20);
        }
    }

    static long vmHwmKb() throws Exception {
        for (String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
            if (line.startsWith("VmHWM:")) {
                return Long.parseLong(line.replaceAll("[^0-9]", ""));
            }
        }
        return -1;
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 2) {
            SAME = Integer.parseInt(args[0]);
            DISTINCT = Integer.parseInt(args[1]);
        }
        byte[] bytes;
        try (InputStream in = ClassChurn.class.getResourceAsStream("/" + NAME + ".class")) {
            bytes = in.readAllBytes();
        }
        // JMX's own classes load now, not between the two Metaspace readings.
        metaspaceUsed();
        ManagementFactory.getClassLoadingMXBean();
        // Warm-up: a tenth of the churn, so that the Metaspace measured after it already holds whatever a
        // first definition costs once (the agent's tables, JIT code, the JMX classes).
        for (int i = 0; i < SAME / 10; i++) {
            churn(bytes, NAME);
        }
        collect();
        long metaspaceWarm = metaspaceUsed();
        for (int i = SAME / 10; i < SAME; i++) {
            churn(bytes, NAME);
        }
        for (int i = 1; i <= DISTINCT; i++) {
            String name = String.format("ChurnA%04d", i);
            churn(renamed(bytes, NAME, name), name);
        }
        collect();
        long unloaded = ManagementFactory.getClassLoadingMXBean().getUnloadedClassCount();
        System.out.println("churned " + (SAME + DISTINCT) + " classes, total " + total);
        System.err.println("churn: unloaded=" + unloaded + " hwm_kb=" + vmHwmKb()
                + " metaspace_warm_kb=" + metaspaceWarm / 1024 + " metaspace_end_kb=" + metaspaceUsed() / 1024);
    }
}

// The churned class: an object, an array and a call per instance. Not public, so that its name is free of
// the source file's.
class ChurnA0000 implements IntSupplier {
    private final int[] cells = new int[4];

    private int fill(int k) {
        cells[k & 3] += k;
        return cells[k & 3];
    }

    @Override
    public int getAsInt() {
        return fill(3) + new StringBuilder("x").length();
    }
}
