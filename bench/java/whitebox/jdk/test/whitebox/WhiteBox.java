package jdk.test.whitebox;

/**
 * The two entries of HotSpot's testing interface that bench/steady-bench.sh's STEADY_DEOPT uses: throw away
 * every compiled method, then collect twice so that the code cache holds none of it. HotSpot binds these
 * natives itself when the class is on the boot class path and the JVM runs with
 * -XX:+UnlockDiagnosticVMOptions -XX:+WhiteBoxAPI; it warns about, and skips, the entries this class
 * leaves out. A benchmark's probe, never part of the agent.
 */
public final class WhiteBox {
    private static native void registerNatives();

    static {
        registerNatives();
    }

    public static final WhiteBox INSTANCE = new WhiteBox();

    public native void deoptimizeAll();

    public native void fullGC();
}
