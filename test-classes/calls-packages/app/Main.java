package app;

import app.cache.Cache;
import app.cache.Index;
import app.shop.Order;
import app.util.Json;

// The rules' method selection through the agent (tests/calls.rs, rules.yaml beside this directory): one
// package (app.shop.**), one class (app.cache.Cache) and one method (app.util.Json#parse(String)).
public class Main {
    public static void main(String[] args) {
        Cache cache = new Cache();
        Index index = new Index();
        long total = 0;
        for (int i = 0; i < 10; i++) {
            Order o = new Order(i, 100 + i);
            total += o.totalWithTax();
            cache.put("k" + i, o);
            index.add(i);
        }
        for (int i = 0; i < 4; i++) total += cache.get("k" + i) != null ? 1 : 0;
        for (int i = 0; i < 3; i++) total += Json.parse("[" + i + "]").length() + Json.parse(i).length() + Json.format(i).length();
        System.out.println("total " + total);
    }
}
