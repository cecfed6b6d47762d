/* The libmosquitto interop boundary. Only the Swift module `Mosquitto` imports this. */
#ifndef HERALD_CMOSQUITTO_SHIM_H
#define HERALD_CMOSQUITTO_SHIM_H
#include <mosquitto.h>
#include <mqtt_protocol.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#endif
