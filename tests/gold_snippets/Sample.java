package sample;

import java.util.List;

/** A sample. */
public class Sample {
    private int count;

    public Sample(int count) {
        this.count = count;
    }

    /** Adds. */
    public int add(int a) {
        return count + a;
    }

    @Deprecated
    public int add(int a, int b) {
        return a + b;
    }

    static class Inner {
        void run() {}
    }
}
