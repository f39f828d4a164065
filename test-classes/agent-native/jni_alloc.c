/* Native half of test-classes/agent/JniAlloc.java: objects made by JNI, with and without a constructor. */
#include <jni.h>

JNIEXPORT jobject JNICALL Java_JniAlloc_allocObject(JNIEnv *env, jclass self, jclass target) {
    (void) self;
    return (*env)->AllocObject(env, target);
}

JNIEXPORT jobject JNICALL Java_JniAlloc_newObject(JNIEnv *env, jclass self, jclass target) {
    (void) self;
    jmethodID init = (*env)->GetMethodID(env, target, "<init>", "()V");
    return init == NULL ? NULL : (*env)->NewObject(env, target, init);
}
