import java.lang.instrument.Instrumentation;

/**
 * A java.lang.instrument agent that AttachLoop loads after the instr agent: its ClassFileLoadHook runs after
 * instr's, so it sees the bytes instr's hook leaves, which are the bytes the class is redefined with.
 */
public class AttachSpy {
    static volatile Instrumentation inst;

    public static void agentmain(String args, Instrumentation i) {
        inst = i;
    }
}
