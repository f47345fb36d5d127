//! The one integration test binary (one link keeps build time down on 2 cores); each module is a
//! tier or an area: CLI through the built binary, in-process simulator, real kubectl on a socket.

mod brownfield;
mod class;
mod cli;
mod code_shape;
mod containers;
mod course_case;
mod docs;
mod engine;
mod engine_binary;
mod engine_watch;
mod glossary;
mod i18n_flows;
mod k8s_predicates;
mod kubectl;
mod lab;
mod lab_reports;
mod labs_content;
mod selftest;
mod sim_api;
mod sim_apply;
mod sim_controllers;
mod sim_crd;
mod sim_disruption;
mod sim_gpu;
mod sim_hostile;
mod sim_kinds;
mod sim_patch;
mod sim_proto;
mod sim_quota;
mod sim_rbac;
mod sim_scale;
mod sim_serve;
mod sim_transport;
mod sim_validation;
mod support;
