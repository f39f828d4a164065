package app.cache;

// Same package as Cache, but not selected: the rules name the class Cache alone.
public class Index {
    private int n;

    public void add(int k) {
        n += k;
    }
}
