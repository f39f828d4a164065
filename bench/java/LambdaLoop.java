import java.util.*;

/**
 * A loop over the JDK's collections and strings with one lambda (Integer::sum into HashMap.merge), about 0.45
 * s a time: what bench/lambda-switch.sh runs through Repeat, before and after a start and stop of the
 * allocation probes on this class alone. A redefinition of this class links the lambda again; whether the
 * JDK's lambda factory then spins a new class decides whether HashMap.merge keeps inlining it.
 */public final class LambdaLoop {
    static long sink;
    public static void main(String[] a) {
        long s = 0;
        for (int r = 0; r < 600; r++) {
            HashMap<String, Integer> m = new HashMap<>();
            ArrayList<String> l = new ArrayList<>();
            for (int i = 0; i < 20000; i++) {
                String k = new StringBuilder("k").append(i % 5000).append('-').append(r & 3).toString();
                m.merge(k, 1, Integer::sum);
                if ((i & 7) == 0) l.add(k.toUpperCase());
            }
            Collections.sort(l);
            for (Map.Entry<String, Integer> e : m.entrySet()) s += e.getKey().hashCode() + e.getValue();
            s += String.join(",", l.subList(0, 100)).length();
            s += Arrays.toString(new int[]{r, (int) s}).length();
        }
        sink += s;
    }
}
