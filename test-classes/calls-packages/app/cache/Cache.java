package app.cache;

import java.util.HashMap;
import java.util.Map;

public class Cache {
    private final Map<String, Object> map = new HashMap<>();

    public void put(String k, Object v) {
        map.put(k, v);
    }

    public Object get(String k) {
        return map.get(k);
    }
}
