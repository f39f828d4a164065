// Reports on demand (tests/agent.rs): allocates 1234 Kept objects, says "ready" and waits for a line on
// stdin, while the test asks for a report with SIGQUIT; then allocates 766 more and exits (2000 in all).
import java.io.BufferedReader;
import java.io.InputStreamReader;

public class OnDemand {
    static class Kept { }
    static Object sink;

    public static void main(String[] args) throws Exception {
        for (int i = 0; i < 1234; i++) sink = new Kept();
        System.out.println("ready");
        System.out.flush();
        new BufferedReader(new InputStreamReader(System.in)).readLine();
        for (int i = 0; i < 766; i++) sink = new Kept();
    }
}
