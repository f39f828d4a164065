/*
 * Placeholder for the bootstrap class that injected probes call. The probes (issue 3) and the agent
 * (issue 4) give it its Early (pure Java, guarded by `engaged`) and native variants.
 */
public final class HeapProxy {
    private HeapProxy() {}
}
