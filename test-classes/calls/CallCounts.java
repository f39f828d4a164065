// Exact call counts and times under the agent (tests/calls.rs): every method of this file is selected
// (rules: "CallCounts**") and the test asserts the counts below exactly, in every execution mode.
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.function.IntUnaryOperator;

public class CallCounts {
    // fib(25): 242,785 calls.
    static int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

    // Mutual recursion: isEven(1000) makes 501 isEven and 500 isOdd calls.
    static boolean isEven(int n) { return n == 0 || isOdd(n - 1); }
    static boolean isOdd(int n) { return n != 0 && isEven(n - 1); }

    // Throws on every 7th call; caught three frames up, in catcher.
    static int thrown;
    static int throwCalls;
    static void thrower() { if (++throwCalls % 7 == 0) throw new IllegalStateException("seventh"); }
    static void middle2() { thrower(); }
    static void middle1() { middle2(); }
    static int catcher() {
        try { middle1(); return 0; } catch (IllegalStateException e) { thrown++; return 1; }
    }

    // A constructor that throws after super(): 10 constructions, 2 throw (v = 4, 8).
    static class Base { Base(int v) { } }
    static class ThrowsAfterSuper extends Base {
        ThrowsAfterSuper(int v) { super(v); if (v % 4 == 0) throw new IllegalArgumentException("v=" + v); }
    }

    interface Greeter {
        String name();
        default String greet() { return "hello " + name(); }
        static Greeter of(String n) { return new Named(n); }
    }
    static final class Named implements Greeter {
        private final String n;
        Named(String n) { this.n = n; }
        public String name() { return n; }
    }

    static int syncCounter;
    static synchronized void syncMethod() { syncCounter++; }
    synchronized void syncInstance() { syncCounter++; }

    // Called by 8 threads, thread t calls it 1000 * (t + 1) times.
    static long work(long x) { return x * 31 + 7; }

    // Called back from uninstrumented JDK code (Arrays.sort) through a lambda.
    static int compareValues(Integer a, Integer b) { return Integer.compare(a, b); }

    static void sleepForever() {
        try { Thread.sleep(Long.MAX_VALUE); } catch (InterruptedException e) { }
    }

    static volatile boolean spin = true;
    static long spinner(long i) { return i + 1; }
    static void stoppable() { long i = 0; while (spin) i = spinner(i); }

    public static void main(String[] args) throws Exception {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        int f = fib(25);
        boolean even = isEven(1000);
        int caught = 0;
        for (int i = 0; i < 700; i++) caught += catcher();
        int ctorFailures = 0;
        for (int v = 1; v <= 10; v++) {
            try { new ThrowsAfterSuper(v); } catch (IllegalArgumentException e) { ctorFailures++; }
        }
        StringBuilder greetings = new StringBuilder();
        for (int i = 0; i < 5; i++) greetings.append(Greeter.of("g" + i).greet().length());
        IntUnaryOperator square = x -> x * x;
        int sum = 0;
        for (int i = 0; i < 100; i++) sum += square.applyAsInt(i);
        CallCounts self = new CallCounts();
        for (int i = 0; i < 30; i++) { syncMethod(); self.syncInstance(); }
        Integer[] values = new Integer[64];
        for (int i = 0; i < values.length; i++) values[i] = (i * 37) % 64;
        Arrays.sort(values, (a, b) -> compareValues(a, b));

        Thread[] workers = new Thread[8];
        long[] results = new long[8];
        long[] cpu = new long[8];
        for (int t = 0; t < workers.length; t++) {
            final int k = t;
            workers[t] = new Thread(() -> {
                long x = k;
                for (int i = 0; i < 1000 * (k + 1); i++) x = work(x);
                results[k] = x;
                cpu[k] = mx.getCurrentThreadCpuTime();
            }, "worker-" + t);
            workers[t].start();
        }
        for (Thread w : workers) w.join();

        Thread sleeper = new Thread(CallCounts::sleepForever, "sleeper");
        sleeper.setDaemon(true);
        sleeper.start();

        int feature = Runtime.version().feature();
        String stopped = "skipped";
        if (feature < 20 && args.length > 0 && args[0].equals("stop")) {
            Thread victim = new Thread(CallCounts::stoppable, "victim");
            victim.start();
            Thread.sleep(200);
            stopThread(victim);
            victim.join();
            stopped = "stopped";
        }
        while (sleeper.getState() != Thread.State.TIMED_WAITING) Thread.sleep(1);

        System.out.println("result fib=" + f + " even=" + even + " caught=" + caught + " thrown=" + thrown
                + " ctorFailures=" + ctorFailures + " greetings=" + greetings + " sum=" + sum
                + " sync=" + syncCounter + " sorted=" + values[0] + ".." + values[63] + " " + stopped);
        for (int t = 0; t < workers.length; t++) System.out.println("cpu worker-" + t + " " + cpu[t]);
        System.out.println("cpu main " + mx.getCurrentThreadCpuTime());
    }

    @SuppressWarnings({"deprecation", "removal"})
    static void stopThread(Thread t) throws Exception {
        Thread.class.getMethod("stop").invoke(t);
    }
}
