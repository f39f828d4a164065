import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.HashSet;
import java.util.Set;
import java.util.function.IntBinaryOperator;
import java.util.function.IntUnaryOperator;

/**
 * Starts and stops the allocation probes three times through the agent's control entry (what instr.Control
 * and `instr ctl` use) and links two lambdas of this class after each switch: a redefinition of this class
 * links them again. Prints how many classes each lambda had, from before the first switch and over the six
 * switches, and checks that every class computes what the lambda says (tests/lambdas.rs).
 */
public final class LambdaSwitch {
    static IntBinaryOperator sum() {
        return Integer::sum;
    }

    static IntUnaryOperator adder(int k) {
        return x -> x + k;
    }

    public static void main(String[] args) throws Throwable {
        Set<Class<?>> sums = new HashSet<>(), adders = new HashSet<>();
        // Linked before any switch: with the agent loaded at start=off these keep their class too.
        sums.add(sum().getClass());
        adders.add(adder(-1).getClass());
        for (int i = 0; i < 3; i++) {
            for (String command : new String[] {"start alloc", "stop alloc"}) {
                control(command);
                IntBinaryOperator s = sum();
                IntUnaryOperator a = adder(i);
                if (s.applyAsInt(i, 40) != i + 40 || a.applyAsInt(2) != 2 + i) {
                    throw new AssertionError("a lambda computes the wrong value after " + command);
                }
                sums.add(s.getClass());
                adders.add(a.getClass());
            }
        }
        System.out.println("classes: sum " + sums.size() + ", adder " + adders.size());
    }

    private static void control(String command) throws Throwable {
        Class<?> proxy = Class.forName("java.lang.HeapProxy", false, null);
        MethodHandle h = MethodHandles.publicLookup().findStatic(proxy, "control",
                MethodType.methodType(String.class, String.class));
        String answer = (String) h.invokeExact(command);
        if (answer == null || answer.startsWith("error: ")) {
            throw new IllegalStateException(command + ": " + answer);
        }
    }
}
